package dev.baton.election;

/**
 * A number that strictly increases with every new grant of the same election, and stays the same
 * while the grant is renewed.
 *
 * <p>Hand it to every write the leader makes on a shared resource. The resource remembers the
 * highest token it has accepted and refuses a lower one, so a leader that was paused past the end
 * of its lease cannot overwrite the work of its successor. What the number is depends on the store:
 * a {@code term} column in SQL, the holder's node's {@code mzxid} in ZooKeeper, a key's {@code
 * create_revision} in etcd, {@code leaseTransitions} on a Kubernetes Lease. Tokens of different
 * elections or different stores are not comparable.
 */
public record FencingToken(long value) implements Comparable<FencingToken> {

  public static FencingToken of(long value) {
    return new FencingToken(value);
  }

  /** True when this token was granted after {@code other}. */
  public boolean isNewerThan(FencingToken other) {
    return value > other.value;
  }

  @Override
  public int compareTo(FencingToken other) {
    return Long.compare(value, other.value);
  }

  @Override
  public String toString() {
    return Long.toString(value);
  }
}
