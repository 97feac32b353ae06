package io.delayedtask.operator.bench;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import io.delayedtask.operator.testing.BuildIdentity;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import org.slf4j.LoggerFactory;

/**
 * What the benchmark mains of this package print first and count with: the headline (what was
 * measured, when, on what), the machine's load, percentiles.
 */
final class BenchReport {
  private BenchReport() {}

  /** Quiet logs, and the report's first lines: what was measured, when, on what. */
  static StringBuilder report(String title, String setup) {
    ((Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME)).setLevel(Level.WARN);
    return new StringBuilder("# ")
        .append(title)
        .append("\n\n")
        .append("Build ")
        .append(BuildIdentity.workingTree())
        .append(", ")
        .append(Instant.now())
        .append(", ")
        .append(Runtime.getRuntime().availableProcessors())
        .append(" cores, Java ")
        .append(System.getProperty("java.version"))
        .append(", load average ")
        .append(loadAverage())
        .append(". ")
        .append(setup)
        .append("\n\n");
  }

  /** The machine's load average over 1, 5 and 15 minutes: the other work it was doing meanwhile. */
  static String loadAverage() {
    try {
      String[] parts = Files.readString(Path.of("/proc/loadavg")).split(" ");
      return parts[0] + " " + parts[1] + " " + parts[2];
    } catch (IOException e) {
      return "unknown";
    }
  }

  /** The p-th percentile (0-100) of a sorted list, nearest rank; -1 when it is empty. */
  static long percentile(List<Long> sorted, double p) {
    return sorted.isEmpty()
        ? -1
        : sorted.get(
            Math.max(
                0, Math.min(sorted.size() - 1, (int) Math.ceil(p / 100.0 * sorted.size()) - 1)));
  }

  /** The header of a table of {@link #microsRow}s, its first column named {@code what}. */
  static String microsTable(String what) {
    return "| " + what + " | n | p50 µs | p90 µs | p99 µs | max µs |\n|---|---|---|---|---|---|\n";
  }

  /** A row of durations ({@code nanos}, unsorted): how many, their percentiles and max in µs. */
  static String microsRow(String name, List<Long> nanos) {
    List<Long> sorted = nanos.stream().sorted().toList();
    return String.format(
        "| %s | %d | %.0f | %.0f | %.0f | %.0f |%n",
        name,
        sorted.size(),
        percentile(sorted, 50) / 1000.0,
        percentile(sorted, 90) / 1000.0,
        percentile(sorted, 99) / 1000.0,
        percentile(sorted, 100) / 1000.0);
  }

  /** The p-th percentile (0-100) of unsorted {@code nanos}, in µs. */
  static double micros(List<Long> nanos, double p) {
    return percentile(nanos.stream().sorted().toList(), p) / 1000.0;
  }
}
