package io.delayedtask.operator.bench;

import io.delayedtask.operator.schedule.Disposition;
import io.delayedtask.operator.schedule.QueueLimits;
import io.delayedtask.operator.schedule.QueueRef;
import io.delayedtask.operator.schedule.RedisConnections;
import io.delayedtask.operator.schedule.RedisSchedule;
import io.delayedtask.operator.schedule.SchedulePoller;
import io.delayedtask.operator.testing.RedisProcess;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.LockSupport;

/**
 * What a {@code DelayedTaskQueue} does on a real redis-server, driven by the operator's own poller
 * ({@code SchedulePoller} over {@code RedisSchedule}, one shard): (a) a burst of due tasks through
 * a rate-limited queue: dispatches in every window against {@code maxBurst + rate × t}, and the
 * rate achieved; (b) a paused queue holding 10,000 due tasks: the Redis commands per second while
 * it waits (INFO commandstats), and how late tasks in no queue are claimed meanwhile. Prints a
 * Markdown report.
 *
 * <pre>
 * mvn -B -q test-compile exec:java -Dexec.classpathScope=test \
 *     -Dexec.mainClass=io.delayedtask.operator.bench.QueueCost
 * </pre>
 */
public final class QueueCost {
  private static final QueueRef QUEUE = new QueueRef("bench", "emails");
  private static final int BURST_TASKS = 1_000;
  private static final double RATE = 100;
  private static final int BURST = 50;
  private static final int HELD_TASKS = 10_000;
  private static final Duration WAIT = Duration.ofSeconds(20);
  private static final int PLAIN_TASKS = 40;
  private static final Duration IDLE = Duration.ofSeconds(10);

  private QueueCost() {}

  public static void main(String[] args) throws Exception {
    StringBuilder report =
        BenchReport.report(
            "A DelayedTaskQueue's cost on a real redis-server",
            "The operator's poller (`SchedulePoller`, batch 100) over `RedisSchedule`, one shard, a"
                + " redis-server on 127.0.0.1.");
    try (RedisProcess redis = RedisProcess.start()) {
      burst(redis, report);
      pausedQueue(redis, report);
    }
    System.out.println(report);
    System.exit(0);
  }

  private static RedisSchedule schedule(RedisProcess redis, String prefix) {
    RedisSchedule schedule =
        new RedisSchedule(RedisConnections.standalone(redis.uri()), prefix, 1, "bench");
    schedule.queueLimitsKnown();
    return schedule;
  }

  /** (a) BURST_TASKS due at once through maxDispatchesPerSecond RATE, maxBurst BURST. */
  private static void burst(RedisProcess redis, StringBuilder report) throws Exception {
    RedisSchedule schedule = schedule(redis, "burst");
    schedule.queueLimits(QUEUE, QueueLimits.open(RATE, BURST, null));
    Instant due = Instant.now().minusSeconds(1);
    for (int i = 0; i < BURST_TASKS; i++) {
      schedule.schedule(
          "bench/t" + i + "/u", due.plusMillis(i % 100), Optional.of(QUEUE), Optional.empty());
    }
    List<Instant> claimedAt = Collections.synchronizedList(new ArrayList<>());
    CompletableFuture<Void> all = new CompletableFuture<>();
    SchedulePoller poller =
        new SchedulePoller(
            schedule,
            entry -> {
              claimedAt.add(entry.claimedAt());
              if (claimedAt.size() == BURST_TASKS) {
                all.complete(null);
              }
              return CompletableFuture.completedFuture(Disposition.acknowledge());
            },
            SchedulePoller.Settings.defaults());
    long started = System.nanoTime();
    poller.start();
    all.get();
    double wallSeconds = (System.nanoTime() - started) / 1e9;
    poller.close();
    schedule.close();

    List<Long> millis = claimedAt.stream().map(Instant::toEpochMilli).sorted().toList();
    double worst = Double.NEGATIVE_INFINITY;
    int worstCount = 0;
    long worstSpan = 0;
    for (int i = 0; i < millis.size(); i++) {
      for (int j = i; j < millis.size(); j++) {
        long span = millis.get(j) - millis.get(i);
        double over = (j - i + 1) - (BURST + RATE * span / 1000.0);
        if (over > worst) {
          worst = over;
          worstCount = j - i + 1;
          worstSpan = span;
        }
      }
    }
    long first = millis.get(0);
    long span = millis.get(millis.size() - 1) - first;
    long inFirstMilli = millis.stream().filter(m -> m == first).count();
    Map<Long, Integer> perSecond = new TreeMap<>();
    millis.forEach(m -> perSecond.merge((m - first) / 1000, 1, Integer::sum));
    report
        .append("## (a) A burst through a rate-limited queue\n\n")
        .append(BURST_TASKS)
        .append(" tasks due at once in a queue with `maxDispatchesPerSecond: ")
        .append((int) RATE)
        .append("`, `maxBurst: ")
        .append(BURST)
        .append("`; each claim's time is the Redis ")
        .append("clock's when its script ran.\n\n")
        .append("| figure | value |\n|---|---|\n")
        .append("| claimed in the first millisecond (the bucket starts full) | ")
        .append(inFirstMilli)
        .append(" |\n")
        .append("| all claimed after (first claim to last) | ")
        .append(span)
        .append(" ms (wall ")
        .append(String.format("%.2f", wallSeconds))
        .append(" s) |\n")
        .append("| achieved rate after the burst, (n − maxBurst) / span | ")
        .append(String.format("%.1f", (BURST_TASKS - BURST) * 1000.0 / span))
        .append(" /s |\n")
        .append("| windows checked (every pair of claims) | ")
        .append((long) millis.size() * (millis.size() + 1) / 2)
        .append(" |\n")
        .append("| tightest window: claims − (maxBurst + rate × t) | ")
        .append(String.format("%.2f", worst))
        .append(" (")
        .append(worstCount)
        .append(" claims in ")
        .append(worstSpan)
        .append(" ms) |\n")
        .append("| bound held in every window | ")
        .append(worst <= 1e-9 ? "yes" : "NO")
        .append(" |\n\n")
        .append("Claims per second from the first: ")
        .append(perSecond.values())
        .append(".\n\n");
  }

  /** (b) HELD_TASKS due in a paused queue while tasks in no queue fall due. */
  private static void pausedQueue(RedisProcess redis, StringBuilder report) throws Exception {
    RedisSchedule schedule = schedule(redis, "paused");
    schedule.queueLimits(QUEUE, QueueLimits.paused());
    Instant due = Instant.now().minusSeconds(60);
    for (int i = 0; i < HELD_TASKS; i++) {
      schedule.schedule(
          "bench/held-" + i + "/u", due.plusMillis(i), Optional.of(QUEUE), Optional.empty());
    }
    Map<String, Instant> dueOf = new ConcurrentHashMap<>();
    List<Long> lateMillis = Collections.synchronizedList(new ArrayList<>());
    SchedulePoller poller =
        new SchedulePoller(
            schedule,
            entry -> {
              Instant plainDue = dueOf.get(entry.id());
              if (plainDue != null) {
                lateMillis.add(Duration.between(plainDue, entry.claimedAt()).toMillis());
              }
              return CompletableFuture.completedFuture(Disposition.acknowledge());
            },
            SchedulePoller.Settings.defaults());
    poller.start();
    // The first claims mark the held tasks (reported 500 a claim): let them settle first.
    LockSupport.parkNanos(
        Duration.ofSeconds(3).toNanos()); // a benchmark's warm-up, not a test's wait
    Map<String, Long> idleBefore = commandCalls(redis);
    long idleStarted = System.nanoTime();
    LockSupport.parkNanos(
        IDLE.toNanos()); // nothing but the paused queue: what it costs while it waits
    double idleSeconds = (System.nanoTime() - idleStarted) / 1e9;
    Map<String, Long> idle = delta(idleBefore, commandCalls(redis));
    Map<String, Long> before = commandCalls(redis);
    long started = System.nanoTime();
    long every = WAIT.toMillis() / PLAIN_TASKS;
    for (int i = 0; i < PLAIN_TASKS; i++) {
      Instant plainDue = Instant.now().plusMillis(every);
      String id = "bench/plain-" + i + "/u";
      dueOf.put(id, plainDue);
      schedule.schedule(id, plainDue);
      LockSupport.parkNanos(Duration.ofMillis(every).toNanos());
    }
    double seconds = (System.nanoTime() - started) / 1e9;
    Map<String, Long> after = commandCalls(redis);
    poller.close();
    schedule.close();

    Map<String, Long> delta = delta(before, after);
    long total = delta.values().stream().mapToLong(Long::longValue).sum();
    long idleTotal = idle.values().stream().mapToLong(Long::longValue).sum();
    List<Long> late = new ArrayList<>(lateMillis);
    Collections.sort(late);
    report
        .append("## (b) A paused queue holding ")
        .append(HELD_TASKS)
        .append(" due tasks\n\n")
        .append(
            "Redis counts the commands a script runs as well as the script's EVALSHA; INFO itself is left ")
        .append("out.\n\n")
        .append(
            "| while | seconds | Redis commands per second | per command (calls) |\n|---|---|---|---|\n")
        .append("| nothing but the paused queue | ")
        .append(String.format("%.1f", idleSeconds))
        .append(" | ")
        .append(String.format("%.2f", idleTotal / idleSeconds))
        .append(" | ")
        .append(idle)
        .append(" |\n")
        .append("| tasks in no queue fall due (below) | ")
        .append(String.format("%.1f", seconds))
        .append(" | ")
        .append(String.format("%.2f", total / seconds))
        .append(" | ")
        .append(delta)
        .append(" |\n\n")
        .append("After a 3 s warm-up (the held tasks reported), ")
        .append(PLAIN_TASKS)
        .append(" tasks in no queue fall due, ")
        .append("one every ")
        .append(every)
        .append(" ms (each `schedule` is one EVALSHA of its own).\n\n")
        .append("| figure | value |\n|---|---|\n")
        .append("| tasks in no queue claimed | ")
        .append(late.size())
        .append(" of ")
        .append(PLAIN_TASKS)
        .append(" |\n")
        .append("| their claim after their due time, p50 / p90 / max | ")
        .append(
            late.isEmpty()
                ? "-"
                : percentile(late, 50)
                    + " / "
                    + percentile(late, 90)
                    + " / "
                    + late.get(late.size() - 1)
                    + " ms")
        .append(" |\n\n");
  }

  private static Map<String, Long> delta(Map<String, Long> before, Map<String, Long> after) {
    Map<String, Long> delta = new TreeMap<>();
    after.forEach(
        (command, calls) -> {
          long more = calls - before.getOrDefault(command, 0L);
          if (more > 0 && !command.equals("info")) {
            delta.put(command, more);
          }
        });
    return delta;
  }

  private static long percentile(List<Long> sorted, int p) {
    return sorted.get(Math.min(sorted.size() - 1, (int) Math.ceil(p / 100.0 * sorted.size()) - 1));
  }

  /** Calls per command the server has answered (INFO commandstats). */
  private static Map<String, Long> commandCalls(RedisProcess redis) {
    RedisClient client = RedisClient.create(redis.uri());
    try (StatefulRedisConnection<String, String> connection = client.connect()) {
      Map<String, Long> calls = new TreeMap<>();
      connection
          .sync()
          .info("commandstats")
          .lines()
          .filter(line -> line.startsWith("cmdstat_"))
          .forEach(
              line ->
                  calls.put(
                      line.substring(8, line.indexOf(':')),
                      Long.parseLong(line.replaceAll("^cmdstat_[^:]+:calls=([0-9]+),.*", "$1"))));
      return calls;
    } finally {
      client.shutdown();
    }
  }
}
