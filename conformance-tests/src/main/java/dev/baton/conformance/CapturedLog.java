package dev.baton.conformance;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * What slf4j-simple (the test logging backend, which writes to {@code System.err} as it finds it at
 * each line) prints while this is open; it still reaches the console too. For a backend's own tests
 * of what it logs, as a test logging backend sees it.
 */
public final class CapturedLog implements AutoCloseable {

  private static final Pattern WARN_OR_ABOVE = Pattern.compile("\\b(WARN|ERROR|WARNING|SEVERE)\\b");

  private final PrintStream original;
  private final ByteArrayOutputStream captured = new ByteArrayOutputStream();

  private CapturedLog() {
    this.original = System.err;
    OutputStream tee =
        new OutputStream() {
          @Override
          public void write(int b) {
            synchronized (captured) {
              captured.write(b);
            }
            original.write(b);
          }

          @Override
          public void write(byte[] b, int off, int len) {
            synchronized (captured) {
              captured.write(b, off, len);
            }
            original.write(b, off, len);
          }
        };
    System.setErr(new PrintStream(tee, true, StandardCharsets.UTF_8));
  }

  public static CapturedLog start() {
    return new CapturedLog();
  }

  public String text() {
    synchronized (captured) {
      return captured.toString(StandardCharsets.UTF_8);
    }
  }

  public List<String> linesAtWarnOrAbove() {
    return Arrays.stream(text().split("\n"))
        .filter(l -> WARN_OR_ABOVE.matcher(l).find())
        .collect(Collectors.toList());
  }

  @Override
  public void close() {
    System.setErr(original);
  }
}
