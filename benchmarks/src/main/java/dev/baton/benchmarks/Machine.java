package dev.baton.benchmarks;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/** The machine a run measured on, for the report. */
record Machine(int cores, long memoryBytes, String os, String jdk, double loadAtStart, String cpu) {

  static Machine describe() {
    long memory = -1;
    if (ManagementFactory.getOperatingSystemMXBean()
        instanceof com.sun.management.OperatingSystemMXBean os) {
      memory = os.getTotalMemorySize();
    }
    return new Machine(
        Runtime.getRuntime().availableProcessors(),
        memory,
        osName(),
        System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version"),
        ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage(),
        cpuModel());
  }

  private static String osName() {
    try {
      for (String line : Files.readAllLines(Path.of("/etc/os-release"))) {
        if (line.startsWith("PRETTY_NAME=")) {
          return line.substring("PRETTY_NAME=".length()).replace("\"", "")
              + ", Linux "
              + System.getProperty("os.version");
        }
      }
    } catch (IOException e) {
      // not Linux, or no os-release: the JVM's own names below
    }
    return System.getProperty("os.name") + " " + System.getProperty("os.version");
  }

  private static String cpuModel() {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
        if (line.startsWith("model name")) {
          return line.substring(line.indexOf(':') + 1).trim();
        }
      }
    } catch (IOException e) {
      // not Linux
    }
    return System.getProperty("os.arch");
  }

  String summary() {
    return String.format(
        Locale.ROOT,
        "%d cores, %.1f GiB, %s, %s",
        cores,
        memoryBytes / (1024.0 * 1024 * 1024),
        os,
        jdk);
  }
}
