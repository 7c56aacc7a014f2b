package dev.baton.election;

import java.util.regex.Pattern;

/**
 * Hides the passwords that connection URLs carry, wherever a URL is shown (messages, logs, {@code
 * describe()}, {@link ElectionProperties#toString()}) or passed on. The one place that knows the
 * forms: user info ({@code scheme://user:password@host}, also in comma-separated endpoint lists),
 * parameters whose name says password, secret or token ({@code ?user=u&password=p}, H2's {@code
 * ;PASSWORD=p}, {@code sslpassword=}, {@code access_token=}), and Oracle's {@code
 * user/password@host}. The user name and everything else stay, so that a message still says which
 * server and which account.
 */
public final class UrlSecrets {

  /** What a hidden password reads as. */
  public static final String HIDDEN = "<hidden>";

  // RFC 3986: user info cannot hold an unencoded / ? # or @, so it ends at the first @ before any.
  private static final Pattern USER_INFO = Pattern.compile("(//[^/?#@\\s:,]*):[^/?#@\\s,]*@");
  private static final Pattern PARAMETER =
      Pattern.compile(
          "((?:^|[?&;:])[\\w.-]*(?:password|passwd|pwd|secret|token)[\\w.-]*=)[^&;,\\s]*",
          Pattern.CASE_INSENSITIVE);
  private static final Pattern ORACLE =
      Pattern.compile("(jdbc:oracle:\\w+:[^/@:\\s]*)/[^@\\s]*@", Pattern.CASE_INSENSITIVE);

  private UrlSecrets() {}

  /**
   * {@code url} (or a list of them, or any text holding them) with every password replaced by
   * {@value #HIDDEN}.
   */
  public static String redact(String url) {
    String s = USER_INFO.matcher(url).replaceAll("$1:" + HIDDEN + "@");
    s = PARAMETER.matcher(s).replaceAll("$1" + HIDDEN);
    return ORACLE.matcher(s).replaceAll("$1/" + HIDDEN + "@");
  }

  /** True when {@code url} carries a password that {@link #redact} would hide. */
  public static boolean carriesSecret(String url) {
    return !redact(url).equals(url);
  }
}
