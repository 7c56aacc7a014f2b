package dev.baton.election;

import static java.util.Objects.requireNonNull;

/**
 * An {@link ElectionRecord} with the store's version of it (a Kubernetes resourceVersion, an ETag,
 * a ModifyIndex): the value a conditional replace must name.
 */
public record VersionedRecord(ElectionRecord record, String version) {

  public VersionedRecord {
    requireNonNull(record, "record");
    requireNonNull(version, "version");
  }
}
