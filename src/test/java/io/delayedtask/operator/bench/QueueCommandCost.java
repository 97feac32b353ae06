package io.delayedtask.operator.bench;

import io.delayedtask.operator.schedule.Disposition;
import io.delayedtask.operator.schedule.LuaScript;
import io.delayedtask.operator.schedule.QueueLimits;
import io.delayedtask.operator.schedule.QueueRef;
import io.delayedtask.operator.schedule.RedisSchedule;
import io.delayedtask.operator.schedule.SchedulePoller;
import io.delayedtask.operator.testing.RedisProcess;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Collectors;

/**
 * Benchmark (c) of issue 33, not a test: what a {@code DelayedTaskQueue} costs Redis, on a real
 * redis-server on 127.0.0.1 driven by the operator's own schedule and poller.
 *
 * <ul>
 *   <li>Redis commands per fired task, tasks in no queue against tasks in a queue whose limits do
 *       not bind ({@code maxDispatchesPerSecond} 1,000 at a load of 200/s), rounds alternated. A
 *       round: tasks scheduled at {@code bench.rate}/s for {@code bench.seconds}, each due 1-2 s
 *       after, claimed by the poller and handed to a pool of 8 threads that acknowledge it and, for
 *       a queued task, free its slot as the reconciler does once a status-only task fired ({@code
 *       queue-free.lua}). Counted as {@code ScheduleBenchmark} counts: commands sent by clients
 *       (SLOWLOG at threshold 0, the Lua client's entries left out) and all commands (INFO
 *       commandstats, those run inside scripts too), divided by the tasks fired.
 *   <li>Redis commands per second while 1,000 and then 10,000 due tasks wait in a paused queue
 *       (and, for comparison, with no queue at all): 5 s after the poller started (the held tasks
 *       reported), 10 s of nothing else.
 * </ul>
 *
 * <pre>
 * mvn -B -q -o -DskipControlPlane -DskipTestPackages test-compile exec:java -Dexec.classpathScope=test \
 *     -Dexec.mainClass=io.delayedtask.operator.bench.QueueCommandCost [-Dbench.rate=200] [-Dbench.seconds=15] [-Dbench.rounds=2]
 * </pre>
 */
public final class QueueCommandCost {
  private static final QueueRef QUEUE = new QueueRef("bench", "cost");
  private static final long LOG_CAPACITY = 2_000_000;
  private static final Duration IDLE = Duration.ofSeconds(10);

  private QueueCommandCost() {}

  public static void main(String[] args) throws Exception {
    int rate = Integer.getInteger("bench.rate", 200);
    int seconds = Integer.getInteger("bench.seconds", 15);
    int rounds = Integer.getInteger("bench.rounds", 2);
    StringBuilder report =
        BenchReport.report(
            "Redis commands: a queued task against one in no queue, and a paused queue",
            "The operator's schedule (`RedisSchedule`, one shard) and poller (`SchedulePoller`, default settings), "
                + "a redis-server on 127.0.0.1.");
    Map<String, String> scripts =
        LuaScript.ALL.stream().collect(Collectors.toMap(LuaScript::sha1, LuaScript::name));
    try (RedisProcess redis = RedisProcess.start();
        RedisProbe probe = new RedisProbe(redis.uri(), scripts)) {
      report
          .append(probe.serverDescription())
          .append(".\n\n## Per fired task\n\n")
          .append(
              String.format(
                  "Each round: %d tasks/s scheduled for %d s, each due 1-2 s after; the queue's ",
                  rate, seconds))
          .append(
              "`maxDispatchesPerSecond: 1000` does not bind at this load. Commands from the round's first ")
          .append(
              "`schedule` to 1 s after its last task fired, divided by the tasks fired; which goes first ")
          .append("alternates.\n\n")
          .append(
              "| round | tasks | fired | sent by clients per task | all, incl. inside scripts, per task | sent by clients, by command |\n")
          .append("|---|--:|--:|--:|--:|---|\n");
      double[][] sums = new double[2][2];
      for (int round = 0; round < rounds; round++) {
        for (boolean queued :
            round % 2 == 0 ? new boolean[] {false, true} : new boolean[] {true, false}) {
          double[] perTask = steady(redis, probe, round, queued, rate, seconds, report);
          sums[queued ? 1 : 0][0] += perTask[0];
          sums[queued ? 1 : 0][1] += perTask[1];
        }
      }
      report.append(
          String.format(
              "%nMean of the rounds: **in no queue %.2f (%.2f)**, **in a queue %.2f (%.2f)** "
                  + "commands sent by clients (all) per fired task.%n%n",
              sums[0][0] / rounds, sums[0][1] / rounds, sums[1][0] / rounds, sums[1][1] / rounds));

      report
          .append("## While tasks wait in a paused queue\n\n")
          .append("The poller runs 5 s (the held tasks reported, 500 a claim), then ")
          .append(IDLE.toSeconds())
          .append(
              " s with nothing else to do; INFO commandstats before and after (the harness's own INFO left out), ")
          .append("and the commands sent by clients in the same 10 s.\n\n")
          .append(
              "| waiting in the paused queue | Redis commands per second, all | sent by clients per second | all, by command |\n")
          .append("|--:|--:|--:|---|\n");
      for (int held : new int[] {0, 1_000, 10_000, 1_000, 10_000}) {
        paused(redis, probe, held, report);
      }
    }
    System.out.println(report);
    System.exit(0);
  }

  /** One round; returns {commands sent by clients, all commands} per fired task. */
  private static double[] steady(
      RedisProcess redis,
      RedisProbe probe,
      int round,
      boolean queued,
      int rate,
      int seconds,
      StringBuilder report)
      throws Exception {
    RedisSchedule schedule = QueueBench.schedule(redis, "steady" + round + (queued ? "q" : "p"));
    if (queued) {
      schedule.queueLimits(QUEUE, QueueLimits.open(1000.0, 1000, null));
    }
    int tasks = rate * seconds;
    AtomicInteger fired = new AtomicInteger();
    CompletableFuture<Void> all = new CompletableFuture<>();
    ExecutorService handlers = Executors.newFixedThreadPool(8);
    SchedulePoller poller =
        new SchedulePoller(
            schedule,
            entry ->
                CompletableFuture.supplyAsync(
                    () -> {
                      entry
                          .queue()
                          .ifPresent(queue -> schedule.freeSlots(queue, List.of(entry.id())));
                      if (fired.incrementAndGet() == tasks) {
                        all.complete(null);
                      }
                      return Disposition.acknowledge();
                    },
                    handlers),
            SchedulePoller.Settings.defaults());
    poller.start();
    LockSupport.parkNanos(
        Duration.ofSeconds(1).toNanos()); // the poller's first idle claims out of the count
    Map<String, Long> before = probe.commandCalls();
    probe.startCommandLog(LOG_CAPACITY);
    long start = System.nanoTime();
    for (int i = 0; i < tasks; i++) {
      long wait = start + i * 1_000_000_000L / rate - System.nanoTime();
      if (wait > 0) {
        LockSupport.parkNanos(wait); // pacing the load
      }
      Instant due = Instant.now().plusMillis(1000 + ThreadLocalRandom.current().nextInt(1000));
      schedule.schedule(
          "bench/r" + round + "-" + i + "/u",
          due,
          queued ? Optional.of(QUEUE) : Optional.empty(),
          Optional.empty());
    }
    all.get(seconds + 60L, TimeUnit.SECONDS);
    LockSupport.parkNanos(Duration.ofSeconds(1).toNanos()); // the last acknowledgements flushed
    RedisProbe.CommandLog log = probe.readCommandLog(LOG_CAPACITY);
    long allCommands = RedisProbe.callsBetween(before, probe.commandCalls());
    poller.close();
    handlers.shutdownNow();
    schedule.close();
    if (log.overflowed()) {
      throw new IllegalStateException("the command log overflowed: raise LOG_CAPACITY");
    }
    double sent = (double) log.clientCommands() / fired.get();
    double allPerTask = (double) allCommands / fired.get();
    report
        .append("| ")
        .append(round + 1)
        .append(queued ? ", in a queue" : ", in no queue")
        .append(" | ")
        .append(String.format("%,d", tasks))
        .append(" | ")
        .append(String.format("%,d", fired.get()))
        .append(" | ")
        .append(String.format("%.2f", sent))
        .append(" | ")
        .append(String.format("%.2f", allPerTask))
        .append(" | ")
        .append(log.clientCommandsByName())
        .append(" |\n");
    return new double[] {sent, allPerTask};
  }

  private static void paused(RedisProcess redis, RedisProbe probe, int held, StringBuilder report) {
    RedisSchedule schedule = QueueBench.schedule(redis, "paused" + held + "-" + System.nanoTime());
    schedule.queueLimits(QUEUE, QueueLimits.paused());
    Instant due = Instant.now().minusSeconds(60);
    for (int i = 0; i < held; i++) {
      schedule.schedule(
          "bench/held-" + i + "/u", due.plusMillis(i), Optional.of(QUEUE), Optional.empty());
    }
    AtomicInteger claimed = new AtomicInteger();
    SchedulePoller poller =
        new SchedulePoller(
            schedule,
            entry -> {
              claimed.incrementAndGet();
              return CompletableFuture.completedFuture(Disposition.acknowledge());
            },
            SchedulePoller.Settings.defaults());
    poller.start();
    LockSupport.parkNanos(Duration.ofSeconds(5).toNanos()); // the held tasks reported first
    Map<String, Long> before = probe.commandCalls();
    probe.startCommandLog(LOG_CAPACITY);
    long started = System.nanoTime();
    LockSupport.parkNanos(
        IDLE.toNanos()); // nothing but the paused queue: what it costs while it waits
    double idleSeconds = (System.nanoTime() - started) / 1e9;
    Map<String, Long> after = probe.commandCalls();
    RedisProbe.CommandLog log = probe.readCommandLog(LOG_CAPACITY);
    poller.close();
    schedule.close();
    if (claimed.get() > 0) {
      throw new IllegalStateException(claimed.get() + " tasks claimed from a paused queue");
    }
    Map<String, Long> byCommand = new java.util.TreeMap<>();
    after.forEach(
        (command, calls) -> {
          long more = calls - before.getOrDefault(command, 0L);
          if (more > 0 && !List.of("info", "slowlog", "config").contains(command)) {
            byCommand.put(command, more);
          }
        });
    report
        .append("| ")
        .append(String.format("%,d", held))
        .append(" | ")
        .append(String.format("%.2f", RedisProbe.callsBetween(before, after) / idleSeconds))
        .append(" | ")
        .append(String.format("%.2f", log.clientCommands() / idleSeconds))
        .append(" | ")
        .append(byCommand)
        .append(" |\n");
  }
}
