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
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Benchmark (b) of issue 33, not a test: how late a task in no queue is claimed while a saturated
 * {@code DelayedTaskQueue} (10,000 due tasks draining at {@code maxDispatchesPerSecond: 200}, so it
 * never empties during the run) shares the shard with it, against the same tasks with no queue at
 * all. Rounds alternate the two sides, each on keys of its own; the operator's poller over {@code
 * RedisSchedule} (one shard, a real redis-server on 127.0.0.1), the handler acknowledging each
 * claim at once. Lag = when the handler got the claim − the task's due time, on this host's clock.
 * Target: the side with the queue within noise of the side without.
 *
 * <pre>
 * mvn -B -q -o -DskipControlPlane -DskipTestPackages test-compile exec:java -Dexec.classpathScope=test \
 *     -Dexec.mainClass=io.delayedtask.operator.bench.QueueNeighbourLag [-Dbench.rounds=3]
 * </pre>
 */
public final class QueueNeighbourLag {
  private static final QueueRef QUEUE = new QueueRef("bench", "saturated");
  private static final int QUEUED = 10_000;
  private static final double RATE = 200;
  private static final int PLAIN = 200;
  private static final Duration EVERY = Duration.ofMillis(100);

  /**
   * The first plain task falls due this long after the poller starts: the queue is draining by
   * then.
   */
  private static final Duration WARM_UP = Duration.ofSeconds(3);

  private QueueNeighbourLag() {}

  public static void main(String[] args) throws Exception {
    int rounds = Integer.getInteger("bench.rounds", 3);
    StringBuilder report =
        BenchReport.report(
            "A task in no queue beside a saturated DelayedTaskQueue",
            "The operator's poller (`SchedulePoller`, default settings) over `RedisSchedule`, one shard, a redis-server "
                + "on 127.0.0.1; the handler acknowledges each claim at once.");
    report
        .append(
            String.format(
                "%d tasks in no queue fall due one every %d ms, from %d s after the poller starts. ",
                PLAIN, EVERY.toMillis(), WARM_UP.toSeconds()))
        .append(
            String.format(
                "With the queue: %,d more tasks, due before the poller starts, wait in a queue with ",
                QUEUED))
        .append(
            String.format(
                "`maxDispatchesPerSecond: %.0f` (`maxBurst` its default), so it claims at its rate ",
                RATE))
        .append("all through the run. Lag = the handler's call − the due time. ")
        .append(rounds)
        .append(" rounds of each side, alternated.\n\n")
        .append(
            "| round | side | plain tasks claimed | their lag p50 / p99 / max | queued tasks claimed meanwhile |\n")
        .append("|--:|---|--:|---|--:|\n");
    List<Long> without = new ArrayList<>();
    List<Long> with = new ArrayList<>();
    try (RedisProcess redis = RedisProcess.start()) {
      for (int round = 1; round <= rounds; round++) {
        boolean queueFirst = round % 2 == 0;
        for (boolean saturated :
            queueFirst ? new boolean[] {true, false} : new boolean[] {false, true}) {
          List<Long> lags = run(redis, round, saturated, report);
          (saturated ? with : without).addAll(lags);
        }
      }
    }
    without.sort(null);
    with.sort(null);
    report
        .append("\nAll rounds: without the queue ")
        .append(summary(without))
        .append("; beside the saturated queue ")
        .append(summary(with))
        .append(
            String.format(
                "; p50 difference %d ms, p99 difference %d ms.%n",
                BenchReport.percentile(with, 50) - BenchReport.percentile(without, 50),
                BenchReport.percentile(with, 99) - BenchReport.percentile(without, 99)));
    System.out.println(report);
    System.exit(0);
  }

  private static List<Long> run(
      RedisProcess redis, int round, boolean saturated, StringBuilder report) throws Exception {
    RedisSchedule schedule =
        QueueBench.schedule(redis, "neighbour" + round + (saturated ? "q" : "p"));
    if (saturated) {
      schedule.queueLimits(QUEUE, QueueLimits.open(RATE, (int) RATE, null));
      Instant firstDue = Instant.now().minusSeconds(60);
      for (int i = 0; i < QUEUED; i++) {
        schedule.schedule(
            "bench/queued-" + i + "/u",
            firstDue.plusMillis(i),
            Optional.of(QUEUE),
            Optional.empty());
      }
    }
    Instant firstPlainDue = Instant.now().plus(WARM_UP);
    for (int i = 0; i < PLAIN; i++) {
      schedule.schedule(
          "bench/plain-" + i + "/u",
          firstPlainDue.plus(EVERY.multipliedBy(i)),
          Optional.empty(),
          Optional.empty());
    }
    ConcurrentLinkedQueue<Long> lags = new ConcurrentLinkedQueue<>();
    ConcurrentLinkedQueue<String> queuedClaims = new ConcurrentLinkedQueue<>();
    CountDownLatch plainDone = new CountDownLatch(PLAIN);
    SchedulePoller poller =
        new SchedulePoller(
            schedule,
            entry -> {
              if (entry.id().startsWith("bench/plain-")) {
                lags.add(Duration.between(entry.due(), Instant.now()).toMillis());
                plainDone.countDown();
              } else {
                queuedClaims.add(entry.id());
              }
              return CompletableFuture.completedFuture(Disposition.acknowledge());
            },
            SchedulePoller.Settings.defaults());
    poller.start();
    boolean all =
        plainDone.await(
            WARM_UP.plus(EVERY.multipliedBy(PLAIN)).plusSeconds(30).toMillis(),
            TimeUnit.MILLISECONDS);
    poller.close();
    schedule.close();
    if (!all) {
      throw new IllegalStateException(
          "only " + lags.size() + " of " + PLAIN + " plain tasks claimed");
    }
    List<Long> sorted = new ArrayList<>(lags);
    sorted.sort(null);
    report
        .append("| ")
        .append(round)
        .append(" | ")
        .append(saturated ? "beside the saturated queue" : "no queue")
        .append(" | ")
        .append(sorted.size())
        .append(" | ")
        .append(summary(sorted))
        .append(" | ")
        .append(String.format("%,d", queuedClaims.size()))
        .append(" |\n");
    return sorted;
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
