package dev.baton.cli;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;

/**
 * The chaos test's COMMAND: a fenced writer. Ten times a second it appends {@code accept TOKEN ...}
 * to a shared log when its fencing token ({@code BATON_FENCING_TOKEN}) is at least the highest the
 * log has accepted, and {@code refuse TOKEN ...} otherwise; it also logs {@code start} and, on
 * SIGTERM, {@code stop}. The check and the append happen under one lock on a lock file that every
 * writer process takes, so they are atomic across processes. Every line carries the writer's pid
 * and {@link System#nanoTime()}, which on Linux is CLOCK_MONOTONIC and comparable across processes.
 *
 * <p>Line format: {@code KIND TOKEN CANDIDATE PID NANOS [HIGHEST]}.
 */
public final class FencedWriter {

  private final Path log;
  private final Path highest;
  private final FileChannel lock;
  private final long token;
  private final String candidate;
  private final long pid = ProcessHandle.current().pid();

  private FencedWriter(Path log, long token, String candidate) throws IOException {
    this.log = log;
    this.highest = Path.of(log + ".highest");
    this.lock = new RandomAccessFile(log + ".lock", "rw").getChannel();
    this.token = token;
    this.candidate = candidate;
  }

  public static void main(String[] args) throws Exception {
    FencedWriter w =
        new FencedWriter(
            Path.of(args[0]),
            Long.parseLong(System.getenv("BATON_FENCING_TOKEN")),
            System.getenv("BATON_CANDIDATE"));
    w.append("start");
    Runtime.getRuntime().addShutdownHook(new Thread(() -> w.append("stop")));
    while (true) {
      w.write();
      Thread.sleep(100);
    }
  }

  /** One fenced write: accepted only if no higher token was accepted before. */
  private synchronized void write() {
    locked(
        () -> {
          long seen = Files.exists(highest) ? Long.parseLong(Files.readString(highest).trim()) : 0;
          if (token >= seen) {
            // Replaced whole, never truncated in place: a writer killed here leaves the old value.
            Path tmp = Path.of(highest + "." + pid);
            Files.writeString(tmp, Long.toString(token));
            Files.move(
                tmp, highest, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            line("accept", "");
          } else {
            line("refuse", " " + seen);
          }
        });
  }

  private synchronized void append(String kind) {
    locked(() -> line(kind, ""));
  }

  private void line(String kind, String extra) throws IOException {
    String text =
        kind + " " + token + " " + candidate + " " + pid + " " + System.nanoTime() + extra + "\n";
    Files.writeString(
        log, text, StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
  }

  private interface Io {
    void run() throws IOException;
  }

  private void locked(Io io) {
    try {
      FileLock held = lock.lock();
      try {
        io.run();
      } finally {
        held.release();
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
