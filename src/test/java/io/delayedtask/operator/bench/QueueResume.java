package io.delayedtask.operator.bench;

import io.delayedtask.operator.schedule.Disposition;
import io.delayedtask.operator.schedule.QueueLimits;
import io.delayedtask.operator.schedule.QueueRef;
import io.delayedtask.operator.schedule.RedisSchedule;
import io.delayedtask.operator.schedule.SchedulePoller;
import io.delayedtask.operator.testing.RedisProcess;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.HdrHistogram.Histogram;

/**
 * Benchmark (d) of issue 33, not a test: resuming a paused {@code DelayedTaskQueue} that holds
 * 10,000 due tasks, at {@code maxDispatchesPerSecond: 500} ({@code maxBurst} its default, 500). The
 * operator's poller over {@code RedisSchedule} (one shard, a real redis-server on 127.0.0.1) runs
 * while the queue is paused (the held tasks reported, as the operator marks them), then the queue
 * opens. Each task's earliest time the rate allows is {@code resume + max(0, k + 1 − maxBurst) /
 * rate} for the k-th (from 0) claimed; its lag over the bound is the handler's call (what fires it
 * in the operator) minus that time, on this host's clock (Redis's too: the same host). Prints
 * whether the claims came in due order and the lag over the bound p50/p99/max (target: p99 ≤ 50
 * ms).
 *
 * <pre>
 * mvn -B -q -o -DskipControlPlane -DskipTestPackages test-compile exec:java -Dexec.classpathScope=test \
 *     -Dexec.mainClass=io.delayedtask.operator.bench.QueueResume [-Dbench.tasks=10000] [-Dbench.rate=500] [-Dbench.rounds=3]
 * </pre>
 */
public final class QueueResume {
  private static final QueueRef QUEUE = new QueueRef("bench", "resume");

  private QueueResume() {}

  /** One claim as the handler saw it, in the order it was handed over. */
  private record Fired(int order, Instant due, Instant claimedAt, long handedNanos) {}

  public static void main(String[] args) throws Exception {
    int tasks = Integer.getInteger("bench.tasks", 10_000);
    double rate = Double.parseDouble(System.getProperty("bench.rate", "500"));
    int rounds = Integer.getInteger("bench.rounds", 3);
    int burst = (int) Math.ceil(rate);
    StringBuilder report =
        BenchReport.report(
            "Resuming a paused DelayedTaskQueue",
            "The operator's poller (`SchedulePoller`, default settings: batch 100) over `RedisSchedule`, one shard, "
                + "a redis-server on 127.0.0.1; the handler acknowledges each claim at once.");
    report
        .append(
            String.format(
                "%,d tasks due (1 ms apart, all in the past) wait in a paused queue; the poller runs ",
                tasks))
        .append(
            "5 s (the held tasks reported), then the queue opens with `maxDispatchesPerSecond: ")
        .append((int) rate)
        .append("`, `maxBurst: ")
        .append(burst)
        .append("` (its default). The k-th claim (from 0) may come at the ")
        .append(
            "earliest at resume + max(0, k + 1 − maxBurst) / rate; lag over the bound = when the handler got it − ")
        .append("that time. Target: fired in due order, lag over the bound p99 ≤ 50 ms. ")
        .append(rounds)
        .append(" rounds, each on keys of its own.\n\n")
        .append(
            "The tail is split between the first 1,000 claims (the burst, and the held tasks told their new ")
        .append(
            "reason, RateLimited, 500 a claim) and the rest; the machine's stalls meanwhile are what a thread ")
        .append("sleeping 1 ms at a time overslept (`HiccupMeter`), p99 and max.\n\n")
        .append(
            "| round | claimed | out of due order | lag over the bound p50 / p99 / max | p99 of the first 1,000 / of the rest | the same from the claim (Redis clock) p50 / p99 / max | last claim after resume (the bound's) | achieved rate after the burst | machine stalls p99 / max |\n")
        .append("|--:|--:|--:|---|---|---|---|--:|---|\n");
    try (RedisProcess redis = RedisProcess.start();
        HiccupMeter hiccups = new HiccupMeter()) {
      for (int round = 1; round <= rounds; round++) {
        run(redis, hiccups, round, tasks, rate, burst, report);
      }
    }
    System.out.println(report);
    System.exit(0);
  }

  private static void run(
      RedisProcess redis,
      HiccupMeter hiccups,
      int round,
      int tasks,
      double rate,
      int burst,
      StringBuilder report)
      throws Exception {
    RedisSchedule schedule = QueueBench.schedule(redis, "resume" + round);
    schedule.queueLimits(QUEUE, QueueLimits.paused());
    Instant firstDue = Instant.now().minusSeconds(60);
    for (int i = 0; i < tasks; i++) {
      schedule.schedule(
          "bench/held-" + i + "/u", firstDue.plusMillis(i), Optional.of(QUEUE), Optional.empty());
    }
    ConcurrentLinkedQueue<Fired> fired = new ConcurrentLinkedQueue<>();
    AtomicInteger order = new AtomicInteger();
    CompletableFuture<Void> all = new CompletableFuture<>();
    SchedulePoller poller =
        new SchedulePoller(
            schedule,
            entry -> {
              fired.add(
                  new Fired(
                      order.getAndIncrement(), entry.due(), entry.claimedAt(), System.nanoTime()));
              if (order.get() == tasks) {
                all.complete(null);
              }
              return CompletableFuture.completedFuture(Disposition.acknowledge());
            },
            SchedulePoller.Settings.defaults());
    poller.start();
    LockSupport.parkNanos(
        Duration.ofSeconds(5).toNanos()); // the paused queue's held tasks reported first
    if (!fired.isEmpty()) {
      throw new IllegalStateException(fired.size() + " tasks claimed from a paused queue");
    }
    Instant resumedAt = Instant.now();
    long resumedNanos = System.nanoTime();
    hiccups.reset();
    schedule.queueLimits(QUEUE, QueueLimits.open(rate, burst, null));
    all.get((long) (tasks / rate * 3) + 60, TimeUnit.SECONDS);
    Histogram stalls = hiccups.interval();
    poller.close();
    schedule.close();

    List<Fired> inOrder = new ArrayList<>(fired);
    inOrder.sort(Comparator.comparingInt(Fired::order));
    int outOfOrder = 0;
    List<Long> overBound = new ArrayList<>();
    List<Long> claimOverBound = new ArrayList<>();
    for (int k = 0; k < inOrder.size(); k++) {
      Fired f = inOrder.get(k);
      if (k > 0 && f.due().isBefore(inOrder.get(k - 1).due())) {
        outOfOrder++;
      }
      long allowedNanos = (long) (Math.max(0, k + 1 - burst) / rate * 1e9);
      overBound.add((f.handedNanos() - resumedNanos - allowedNanos) / 1_000_000);
      claimOverBound.add(
          Duration.between(resumedAt.plusNanos(allowedNanos), f.claimedAt()).toMillis());
    }
    List<Long> firstThousand =
        overBound.subList(0, Math.min(1000, overBound.size())).stream().sorted().toList();
    List<Long> rest =
        overBound.subList(Math.min(1000, overBound.size()), overBound.size()).stream()
            .sorted()
            .toList();
    overBound.sort(null);
    claimOverBound.sort(null);
    Fired last = inOrder.get(inOrder.size() - 1);
    long lastMillis = (last.handedNanos() - resumedNanos) / 1_000_000;
    long boundMillis = (long) (Math.max(0, tasks - burst) / rate * 1000);
    double achieved =
        (double) (tasks - burst)
            / Duration.between(inOrder.get(burst - 1).claimedAt(), last.claimedAt()).toNanos()
            * 1e9;
    report
        .append("| ")
        .append(round)
        .append(" | ")
        .append(String.format("%,d", inOrder.size()))
        .append(" | ")
        .append(outOfOrder)
        .append(" | ")
        .append(summary(overBound))
        .append(" | ")
        .append(BenchReport.percentile(firstThousand, 99))
        .append(" / ")
        .append(BenchReport.percentile(rest, 99))
        .append(" ms | ")
        .append(summary(claimOverBound))
        .append(" | ")
        .append(String.format("%,d ms (%,d ms)", lastMillis, boundMillis))
        .append(" | ")
        .append(String.format("%.1f/s", achieved))
        .append(" | ")
        .append(
            String.format(
                "%.1f / %.1f ms",
                stalls.getValueAtPercentile(99) / 1000.0, stalls.getMaxValue() / 1000.0))
        .append(" |\n");
  }

  private static String summary(List<Long> sorted) {
    return BenchReport.percentile(sorted, 50)
        + " / "
        + BenchReport.percentile(sorted, 99)
        + " / "
        + sorted.get(sorted.size() - 1)
        + " ms";
  }
}
