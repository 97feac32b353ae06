package io.delayedtask.operator.bench;

import io.delayedtask.operator.schedule.Disposition;
import io.delayedtask.operator.schedule.QueueLimits;
import io.delayedtask.operator.schedule.QueueRef;
import io.delayedtask.operator.schedule.RedisSchedule;
import io.delayedtask.operator.schedule.SchedulePoller;
import io.delayedtask.operator.testing.RedisProcess;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IntSummaryStatistics;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Benchmark (a) of issue 33, not a test: how exactly a {@code DelayedTaskQueue}'s rate holds. For
 * each rate (10/s and 500/s; {@code maxBurst} its default, ceil(rate)), {@code maxBurst + rate ×
 * 60} tasks fall due at once in the queue, so that the queue is saturated for 60 s; the operator's
 * own poller ({@code SchedulePoller} over {@code RedisSchedule}, one shard) claims them from a real
 * redis-server on 127.0.0.1. Every window between two claims (each claim's time is the Redis
 * clock's, in whole milliseconds, as the claim script counts it) is checked against {@code maxBurst
 * + rate × t}; the report names the worst window and how many were over.
 *
 * <pre>
 * mvn -B -q -o -DskipControlPlane -DskipTestPackages test-compile exec:java -Dexec.classpathScope=test \
 *     -Dexec.mainClass=io.delayedtask.operator.bench.QueueRateAccuracy [-Dbench.rates=10,500] [-Dbench.seconds=60]
 * </pre>
 */
public final class QueueRateAccuracy {
  private static final QueueRef QUEUE = new QueueRef("bench", "rate");

  private QueueRateAccuracy() {}

  public static void main(String[] args) throws Exception {
    int seconds = Integer.getInteger("bench.seconds", 60);
    StringBuilder report =
        BenchReport.report(
            "A DelayedTaskQueue's rate, held to the bound",
            "The operator's poller (`SchedulePoller`, default settings: batch 100) over `RedisSchedule`, one shard, "
                + "a redis-server on 127.0.0.1; the handler acknowledges each claim at once.");
    report
        .append("Each rate: `maxBurst` its default (ceil(rate)), maxBurst + rate × ")
        .append(seconds)
        .append(" tasks due at once, so the queue is saturated for ")
        .append(seconds)
        .append(" s. A window is ")
        .append(
            "every pair of claims (first, last) with the claims between them; it is over the bound when ")
        .append(
            "claims > maxBurst + rate × (last − first), times on the Redis clock in whole milliseconds (the ")
        .append("claim script's own unit).\n\n")
        .append(
            "| rate | maxBurst | tasks | windows | over the bound | worst window: claims − bound | ")
        .append(
            "its claims, span | first ms | rate achieved after the burst | claims per whole second after the first (min / max) | wall |\n")
        .append("|--:|--:|--:|--:|--:|---|---|--:|--:|---|--:|\n");
    try (RedisProcess redis = RedisProcess.start()) {
      for (String rate : System.getProperty("bench.rates", "10,500").split(",")) {
        run(redis, Double.parseDouble(rate.trim()), seconds, report);
      }
    }
    System.out.println(report);
    System.exit(0);
  }

  private static void run(RedisProcess redis, double rate, int seconds, StringBuilder report)
      throws Exception {
    int burst = (int) Math.max(1, Math.ceil(rate));
    int tasks = burst + (int) Math.round(rate * seconds);
    RedisSchedule schedule = QueueBench.schedule(redis, "rate" + (int) rate);
    schedule.queueLimits(QUEUE, QueueLimits.open(rate, burst, null));
    Instant due = Instant.now().minusSeconds(1);
    for (int i = 0; i < tasks; i++) {
      schedule.schedule(
          "bench/t" + i + "/u", due.plusMillis(i % 100), Optional.of(QUEUE), Optional.empty());
    }
    List<Long> claimedMillis = Collections.synchronizedList(new ArrayList<>(tasks));
    CompletableFuture<Void> all = new CompletableFuture<>();
    SchedulePoller poller =
        new SchedulePoller(
            schedule,
            entry -> {
              claimedMillis.add(entry.claimedAt().toEpochMilli());
              if (claimedMillis.size() == tasks) {
                all.complete(null);
              }
              return CompletableFuture.completedFuture(Disposition.acknowledge());
            },
            SchedulePoller.Settings.defaults());
    long started = System.nanoTime();
    poller.start(); // every task is due already: the burst starts here
    all.get(seconds * 3L + 60, TimeUnit.SECONDS);
    double wall = (System.nanoTime() - started) / 1e9;
    poller.close();
    schedule.close();

    List<Long> t = new ArrayList<>(claimedMillis);
    Collections.sort(t);
    Worst worst = worst(t, rate, burst);
    long first = t.get(0);
    long span = t.get(t.size() - 1) - first;
    long inFirstMilli = t.stream().filter(m -> m == first).count();
    Map<Long, Integer> perSecond = new TreeMap<>();
    t.forEach(m -> perSecond.merge((m - first) / 1000, 1, Integer::sum));
    IntSummaryStatistics whole =
        perSecond.entrySet().stream()
            .filter(e -> e.getKey() > 0 && e.getKey() < span / 1000)
            .mapToInt(Map.Entry::getValue)
            .summaryStatistics();
    report
        .append("| ")
        .append((int) rate)
        .append("/s | ")
        .append(burst)
        .append(" | ")
        .append(String.format("%,d", tasks))
        .append(" | ")
        .append(String.format("%,d", (long) t.size() * (t.size() + 1) / 2))
        .append(" | ")
        .append(worst.over)
        .append(" | ")
        .append(String.format("%+.2f", worst.excess))
        .append(" | ")
        .append(worst.claims)
        .append(" in ")
        .append(worst.spanMillis)
        .append(" ms")
        .append(" | ")
        .append(inFirstMilli)
        .append(" | ")
        .append(String.format("%.2f/s", (tasks - burst) * 1000.0 / span))
        .append(" | ")
        .append(whole.getCount() == 0 ? "-" : whole.getMin() + " / " + whole.getMax())
        .append(" | ")
        .append(String.format("%.1f s", wall))
        .append(" |\n");
  }

  /**
   * The worst window of sorted claim times, and how many windows (pairs i ≤ j) exceed the bound.
   */
  private record Worst(double excess, int claims, long spanMillis, long over) {}

  /**
   * Over the bound: (j − i + 1) − burst − rate × (t_j − t_i) > 0, that is (j − rate·t_j) − (i −
   * rate·t_i) > burst − 1: for each j the worst i is the one with the least i − rate·t_i, so one
   * pass finds the worst window; counting every window over the bound takes a second pass per j,
   * done only from the windows that can be (a j whose worst exceeds).
   */
  static Worst worst(List<Long> t, double rate, int burst) {
    double perMilli = rate / 1000.0;
    double least = Double.POSITIVE_INFINITY;
    int leastAt = 0;
    double excess = Double.NEGATIVE_INFINITY;
    int claims = 0;
    long span = 0;
    long over = 0;
    for (int j = 0; j < t.size(); j++) {
      double key = j - perMilli * t.get(j);
      if (key < least) {
        least = key;
        leastAt = j;
      }
      double here = key - least + 1 - burst;
      if (here > excess) {
        excess = here;
        claims = j - leastAt + 1;
        span = t.get(j) - t.get(leastAt);
      }
      if (here > 1e-9) {
        for (int i = 0; i <= j; i++) {
          if ((j - i + 1) - burst - perMilli * (t.get(j) - t.get(i)) > 1e-9) {
            over++;
          }
        }
      }
    }
    return new Worst(excess, claims, span, over);
  }
}
