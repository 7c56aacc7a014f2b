package dev.baton.jdbc;

import dev.baton.election.ConfigurationException;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * The lease table: its name, its DDL and its notification channel ({@link LeaseStatements} holds
 * the statements on it). One row per election; the row is never deleted, so its {@code term} keeps
 * counting up across releases and every grant gets a higher token.
 */
final class LeaseTable {

  static final String DEFAULT_NAME = "baton_lease";

  /** Names are interpolated into DDL and LISTEN, so only plain identifiers are accepted. */
  private static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,62}");

  private static final Pattern DEFAULT_NAME_IN_DDL = Pattern.compile("\\b" + DEFAULT_NAME + "\\b");

  /** Election names and candidate ids are stored in varchar(255) columns. */
  static final int MAX_NAME_LENGTH = 255;

  private final String qualifiedName;

  LeaseTable(Optional<String> schema, String name) {
    checkIdentifier("table", name);
    schema.ifPresent(s -> checkIdentifier("schema", s));
    this.qualifiedName = schema.map(s -> s + "." + name).orElse(name);
  }

  static String checkIdentifier(String what, String value) {
    if (!IDENTIFIER.matcher(value).matches()) {
      throw new ConfigurationException(
          what
              + ": '"
              + value
              + "' is not a plain SQL identifier; use letters, digits and underscores,"
              + " starting with a letter or underscore, at most 63 characters");
    }
    return value;
  }

  /** {@code schema.table} or {@code table}, as it appears in SQL and messages. */
  String qualifiedName() {
    return qualifiedName;
  }

  /** The CREATE TABLE statement of the dialect's DDL file, for this table's name. */
  String createStatement(Dialect dialect) {
    String withoutComments =
        ddlFileText(dialect)
            .lines()
            .filter(line -> !line.strip().startsWith("--"))
            .collect(Collectors.joining("\n"))
            .strip();
    if (withoutComments.endsWith(";")) {
      withoutComments = withoutComments.substring(0, withoutComments.length() - 1);
    }
    return DEFAULT_NAME_IN_DDL
        .matcher(withoutComments)
        .replaceAll(Matcher.quoteReplacement(qualifiedName));
  }

  /** The DDL file exactly as shipped in the jar, with the default table name. */
  static String ddlFileText(Dialect dialect) {
    try (InputStream in = LeaseTable.class.getResourceAsStream(dialect.ddlFile())) {
      if (in == null) {
        throw new IllegalStateException(
            "DDL resource " + ddlResourcePath(dialect) + " is missing from the jar");
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read DDL resource " + ddlResourcePath(dialect), e);
    }
  }

  /** Where the DDL file sits in the jar, for messages that point administrators to it. */
  static String ddlResourcePath(Dialect dialect) {
    return LeaseTable.class.getPackageName().replace('.', '/') + "/" + dialect.ddlFile();
  }

  /** LISTEN/NOTIFY channel: at most 63 characters, the same for every store on this table. */
  String channel() {
    String channel = ("baton_" + qualifiedName).toLowerCase(Locale.ROOT);
    if (channel.length() <= 63) {
      return channel;
    }
    return channel.substring(0, 54) + "_" + String.format("%08x", channel.hashCode());
  }

  /**
   * Timestamps are kept to the millisecond, so the database's now() can read up to a millisecond
   * before the call really started; without this margin a lease could end a fraction of a
   * millisecond before t0 + ttl, which the H2 fuzz test caught.
   */
  static final long TRUNCATION_MARGIN_MILLIS = 1;
}
