package io.delayedtask.operator.bench;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import io.delayedtask.operator.schedule.RedisConnections;
import io.delayedtask.operator.schedule.RedisSchedule;
import io.delayedtask.operator.testing.BuildIdentity;
import io.delayedtask.operator.testing.RedisProcess;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import org.slf4j.LoggerFactory;

/**
 * What the queue benchmarks ({@code Queue*} mains in this package) share: the headline, the
 * schedule, percentiles.
 */
final class QueueBench {
  private QueueBench() {}

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

  /**
   * The operator's schedule over {@code redis}, one shard, keys under {@code prefix}, its queues'
   * limits known.
   */
  static RedisSchedule schedule(RedisProcess redis, String prefix) {
    RedisSchedule schedule =
        new RedisSchedule(RedisConnections.standalone(redis.uri()), prefix, 1, "bench");
    schedule.queueLimitsKnown();
    return schedule;
  }

  /** The p-th percentile (0-100) of a sorted list, nearest rank. */
  static long percentile(List<Long> sorted, double p) {
    return sorted.isEmpty()
        ? -1
        : sorted.get(
            Math.max(
                0, Math.min(sorted.size() - 1, (int) Math.ceil(p / 100.0 * sorted.size()) - 1)));
  }
}
