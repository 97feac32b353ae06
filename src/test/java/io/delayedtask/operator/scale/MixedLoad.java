package io.delayedtask.operator.scale;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.DelayedTaskStatus;
import io.delayedtask.operator.bench.HiccupMeter;
import io.delayedtask.operator.testing.FiredTimes;
import io.delayedtask.operator.testing.Tasks;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One measured workload of a scale run (not a test): status-only tasks created at a steady rate
 * while the earlier ones fall due at a steady rate, as a busy cluster uses the operator. The
 * harness paces the creates itself (each sent at its own instant) and watches the tasks:
 *
 * <ul>
 *   <li>creation to scheduled: from sending a task's create to seeing its status carry a dueTime
 *       (the harness's watch, so the watch's own delay is included);
 *   <li>fire lag: firedTime - dueTime, as the operator recorded it;
 *   <li>fire lag as a watcher sees it: the moment the harness's watch delivered the first version
 *       with a firedTime, minus dueTime (the operator's status write and the watch's delivery
 *       included; the harness, the operator and the API server share this host's clock);
 *   <li>fired once, none early: a firedTime never changes once set, and never precedes dueTime.
 * </ul>
 */
final class MixedLoad {
  private static final String NS = OperatorScaleLab.NAMESPACE;

  /** Where the floor's tasks go: a namespace no operator watches, so none reconciles them later. */
  static final String FLOOR_NS = "floor";

  /** What one run measured; times in ms. */
  record Result(
      String name,
      int count,
      int fired,
      int firedTwice,
      long early,
      List<Long> lagMs,
      List<Long> toScheduledMs,
      long createFailures,
      List<Long> toSeenMs,
      long harnessStallMs,
      List<Long> watchLagMs) {

    /** The API server's part: from sending a create to the harness's watch seeing the new task. */
    String floorLine() {
      return String.format(
          "%s: %d creates; create to seen by a watch ms p50 %d, p99 %d, max %d",
          name, count, p(toSeenMs, 0.5), p(toSeenMs, 0.99), max(toSeenMs));
    }

    String line() {
      return String.format(
          "%s: %d tasks, fired %d (more than once: %d, early: %d, failed creates: %d); "
              + "fire lag (firedTime - dueTime) ms p50 %d, p99 %d, max %d; "
              + "fire lag seen by a watch (Fired version's arrival - dueTime) ms p50 %d, p99 %d, max %d; "
              + "creation to scheduled ms p50 %d, p99 %d, max %d; "
              + "longest stall of the harness JVM %d ms",
          name,
          count,
          fired,
          firedTwice,
          early,
          createFailures,
          p(lagMs, 0.5),
          p(lagMs, 0.99),
          max(lagMs),
          p(watchLagMs, 0.5),
          p(watchLagMs, 0.99),
          max(watchLagMs),
          p(toScheduledMs, 0.5),
          p(toScheduledMs, 0.99),
          max(toScheduledMs),
          harnessStallMs);
    }

    /**
     * The two fire lags side by side: the operator's own record, and what a watching client sees.
     */
    String lagTable() {
      return String.format(
          "%s, fire lag of %d fired tasks, ms:%n  %-64s %6s %6s %6s%n  %-64s %6d %6d %6d%n"
              + "  %-64s %6d %6d %6d",
          name,
          fired,
          "",
          "p50",
          "p99",
          "max",
          "operator: firedTime - dueTime",
          p(lagMs, 0.5),
          p(lagMs, 0.99),
          max(lagMs),
          "watcher: arrival of the first version with firedTime - dueTime",
          p(watchLagMs, 0.5),
          p(watchLagMs, 0.99),
          max(watchLagMs));
    }

    private static long p(List<Long> sorted, double q) {
      return OperatorScaleLab.percentile(sorted, q);
    }

    private static long max(List<Long> sorted) {
      return sorted.isEmpty() ? -1 : sorted.get(sorted.size() - 1);
    }
  }

  private MixedLoad() {}

  /**
   * Keeping up: every task fired, and p99 of both the fire lag and creation-to-scheduled under
   * this.
   */
  static final long KEEPS_UP_MS = 1_000;

  /**
   * What the operator sustains: steps of {@code step} each, tasks created at a rate and falling due
   * at the same rate, starting at {@code from} per second and raised by {@code factor} after each
   * step that kept up; returns the highest rate that kept up (0 if the first did not).
   */
  static double sustainedRate(OperatorScaleLab lab, double from, double factor, Duration step)
      throws InterruptedException {
    double rate = from;
    double best = 0;
    for (int i = 0; ; i++) {
      int count = (int) Math.round(rate * step.toSeconds());
      Result result = run(lab, "ramp" + i, count, rate, rate, Duration.ofSeconds(2));
      boolean keptUp =
          result.fired() == count
              && result.createFailures() == 0
              && Result.p(result.lagMs(), 0.99) < KEEPS_UP_MS
              && Result.p(result.toScheduledMs(), 0.99) < KEEPS_UP_MS;
      System.out.printf(
          "ramp at %.0f per second: %s; %s%n",
          rate, keptUp ? "kept up" : "fell behind", result.line());
      if (!keptUp) {
        return best;
      }
      best = rate;
      rate = Math.ceil(rate * factor);
    }
  }

  /**
   * Creates {@code count} tasks named {@code <name>-<i>}, task i sent at {@code i /
   * createPerSecond} seconds from the start and due {@code lead + i / duePerSecond} seconds from
   * the start; waits until all have fired (at most 120 s after the last due time).
   */
  static Result run(
      OperatorScaleLab lab,
      String name,
      int count,
      double createPerSecond,
      double duePerSecond,
      Duration lead)
      throws InterruptedException {
    return run(lab, NS, name, count, createPerSecond, duePerSecond, lead, true);
  }

  /**
   * The API server alone, no operator running: the same creates, due in a day; what it takes a
   * create to reach a watch is the floor under creation-to-scheduled, which takes two writes and
   * two watch deliveries.
   */
  static Result floor(OperatorScaleLab lab, String name, int count, double createPerSecond)
      throws InterruptedException {
    lab.target.createNamespace(FLOOR_NS + "-" + name);
    return run(
        lab,
        FLOOR_NS + "-" + name,
        name,
        count,
        createPerSecond,
        createPerSecond,
        Duration.ofDays(1),
        false);
  }

  private static Result run(
      OperatorScaleLab lab,
      String namespace,
      String name,
      int count,
      double createPerSecond,
      double duePerSecond,
      Duration lead,
      boolean awaitFiring)
      throws InterruptedException {
    Watch watch = new Watch();
    SharedIndexInformer<DelayedTask> informer =
        lab.client()
            .resources(DelayedTask.class)
            .inNamespace(namespace)
            .withLabel("load", name)
            .inform(watch);
    Map<String, Instant> sentAt = new ConcurrentHashMap<>();
    AtomicInteger createFailures = new AtomicInteger();
    Instant start = Instant.now().plusMillis(500);
    Instant lastDue = start;
    ScheduledExecutorService senders = Executors.newScheduledThreadPool(8);
    // A stall of the harness JVM (GC, or no CPU for it) delays the harness's creates and watch, and
    // on
    // `mock` the API server inside it: a lag tail that matches it is not the operator's.
    HiccupMeter stalls = new HiccupMeter();
    try {
      for (int i = 0; i < count; i++) {
        String task = name + "-" + i;
        Instant sendAt = start.plusNanos((long) (i * 1e9 / createPerSecond));
        Instant due = start.plus(lead).plusNanos((long) (i * 1e9 / duePerSecond));
        lastDue = due.isAfter(lastDue) ? due : lastDue;
        senders.schedule(
            () -> {
              DelayedTask manifest = Tasks.statusOnly(namespace, task, due);
              manifest.getMetadata().setLabels(Map.of("load", name));
              sentAt.put(task, Instant.now());
              try {
                lab.client().resource(manifest).create();
              } catch (RuntimeException e) {
                createFailures.incrementAndGet();
              }
            },
            Duration.between(Instant.now(), sendAt).toNanos(),
            TimeUnit.NANOSECONDS);
      }
      Instant deadline = awaitFiring ? lastDue.plusSeconds(120) : start.plusSeconds(120);
      while ((awaitFiring ? watch.fired.size() : watch.firstSeenAt.size()) + createFailures.get()
              < count
          && Instant.now().isBefore(deadline)) {
        Thread.sleep(50); // a measuring loop, not a test
      }
    } finally {
      senders.shutdownNow();
      informer.close();
      stalls.close();
    }
    long harnessStallMs = stalls.interval().getMaxValue() / 1000;
    List<Long> lags = new ArrayList<>();
    List<Long> watchLags = new ArrayList<>();
    long early = 0;
    for (Map.Entry<String, DelayedTaskStatus> fired : watch.fired.entrySet()) {
      Instant due = Instant.parse(fired.getValue().getDueTime());
      long lag = Duration.between(due, Instant.parse(fired.getValue().getFiredTime())).toMillis();
      lags.add(lag);
      early += lag < 0 ? 1 : 0;
      watchLags.add(Duration.between(due, watch.firedSeenAt.get(fired.getKey())).toMillis());
    }
    List<Long> toScheduled = since(sentAt, watch.scheduledSeenAt);
    List<Long> toSeen = since(sentAt, watch.firstSeenAt);
    lags.sort(null);
    watchLags.sort(null);
    return new Result(
        name,
        count,
        watch.fired.size(),
        watch.firedTimes.firedMoreThanOnce().size(),
        early,
        lags,
        toScheduled,
        createFailures.get(),
        toSeen,
        harnessStallMs,
        watchLags);
  }

  /** For each task seen, ms from sending its create to {@code seen}; sorted. */
  private static List<Long> since(Map<String, Instant> sentAt, Map<String, Instant> seen) {
    List<Long> ms = new ArrayList<>();
    seen.forEach(
        (task, at) -> {
          Instant sent = sentAt.get(task);
          if (sent != null) {
            ms.add(Duration.between(sent, at).toMillis());
          }
        });
    ms.sort(null);
    return ms;
  }

  /**
   * The first moment each task showed a due time, its firing (a firedTime that changes is a second
   * one), and when the first version with a firedTime arrived.
   */
  private static final class Watch extends TaskVersions {
    final Map<String, Instant> firstSeenAt = new ConcurrentHashMap<>();
    final Map<String, Instant> scheduledSeenAt = new ConcurrentHashMap<>();
    final Map<String, Instant> firedSeenAt = new ConcurrentHashMap<>();
    final Map<String, DelayedTaskStatus> fired = new ConcurrentHashMap<>();

    /**
     * "Fired twice" by the tests' one rule, fed from this informer (no second watch during a
     * measured run).
     */
    final FiredTimes firedTimes = new FiredTimes();

    @Override
    void record(DelayedTask task) {
      Instant now = Instant.now();
      DelayedTaskStatus status = task.getStatus();
      String name = task.getMetadata().getName();
      firstSeenAt.putIfAbsent(name, now);
      if (status == null || status.getDueTime() == null) {
        return;
      }
      scheduledSeenAt.putIfAbsent(name, now);
      if (status.getFiredTime() != null) {
        firedSeenAt.putIfAbsent(name, now); // before fired.put: whoever reads fired finds this set
        fired.put(name, status);
      }
      firedTimes.record(task);
    }
  }
}
