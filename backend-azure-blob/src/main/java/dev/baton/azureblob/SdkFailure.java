package dev.baton.azureblob;

import dev.baton.election.UrlSecrets;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * What the store hands out as the cause of a failed call instead of the SDK's exception: its class
 * name, its message with any SAS signature or account key hidden, its stack trace and its causes
 * alike, and nothing else. The SDK's exceptions hold the request (its URL carries the SAS) and the
 * response, which a logger that serializes an exception's fields, or an error tracker, would show.
 */
final class SdkFailure extends RuntimeException {

  private static final long serialVersionUID = 1L;

  /** Causes copied at most; deeper ones are not shown. */
  private static final int MAX_DEPTH = 8;

  /**
   * A SAS's signature ({@code sig=}) and the credentials of a connection string or a shared-key
   * Authorization header, wherever they stand in a message.
   */
  private static final Pattern SECRET =
      Pattern.compile(
          "(?i)((?:^|[?&;\\s\"'])(?:sig|accountkey|sharedaccesssignature)=)[^&;\\s\"'<]*"
              + "|(sharedkey(?:lite)?\\s+[^:\\s]*:)\\S*");

  private SdkFailure(Throwable original, SdkFailure cause) {
    super(shown(original), cause, false, true);
    setStackTrace(original.getStackTrace());
  }

  /** A copy of {@code e} and its causes that holds no request, response or secret. */
  static SdkFailure of(Throwable e) {
    return copy(e, 0, new IdentityHashMap<>());
  }

  private static SdkFailure copy(Throwable e, int depth, Map<Throwable, Boolean> seen) {
    seen.put(e, Boolean.TRUE);
    Throwable cause = e.getCause();
    SdkFailure copiedCause =
        cause == null || depth >= MAX_DEPTH || seen.containsKey(cause)
            ? null
            : copy(cause, depth + 1, seen);
    return new SdkFailure(e, copiedCause);
  }

  static String hide(String message) {
    return SECRET
        .matcher(UrlSecrets.redact(message))
        .replaceAll(m -> m.group(1) != null ? "$1" + UrlSecrets.HIDDEN : "$2" + UrlSecrets.HIDDEN);
  }

  private static String shown(Throwable e) {
    String message = e.getMessage();
    return e.getClass().getName() + (message == null ? "" : ": " + hide(message));
  }

  /** The original's class and message, as its own toString would show them. */
  @Override
  public String toString() {
    return getMessage();
  }
}
