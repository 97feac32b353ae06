package io.delayedtask.operator.leader;

import io.delayedtask.operator.schedule.ScheduleCounts;
import io.delayedtask.operator.schedule.TaskSchedule;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Watches Redis on a short beat: whether it answers (for /readyz, logged once per change), the
 * schedule's counts (for /metrics), and its server identity. While this instance is active (the
 * leader) it runs the resync at start, when the identity changes (Redis restarted or failed over),
 * when Redis answers again after an outage, after a schedule write failed, when asked, and every
 * resync interval. A resync waits for the task cache to have synced.
 */
public class ScheduleKeeper implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ScheduleKeeper.class);

  private final TaskSchedule schedule;
  private final ScheduleResync resync;
  private final Duration resyncInterval;
  private final Duration beat;
  private final Clock clock;
  private final ScheduledExecutorService executor;
  private final AtomicReference<ScheduleCounts> counts =
      new AtomicReference<>(new ScheduleCounts(0, 0, Duration.ZERO));
  private volatile Boolean reachable;
  private volatile String identity;
  private static final Duration CACHE_SYNC_RECHECK = Duration.ofMillis(100);

  private volatile boolean active;
  private volatile CompletableFuture<Void> firstResync = CompletableFuture.completedFuture(null);
  private final List<Consumer<CompletableFuture<Void>>> onActivate = new CopyOnWriteArrayList<>();
  private volatile boolean resyncWanted;
  private volatile Instant nextResync = Instant.MIN;
  private final Counter driftRepairs;

  public ScheduleKeeper(
      TaskSchedule schedule,
      ScheduleResync resync,
      Duration resyncInterval,
      Duration beat,
      Clock clock,
      MeterRegistry registry) {
    this.schedule = schedule;
    this.resync = resync;
    this.resyncInterval = resyncInterval;
    this.beat = beat;
    this.clock = clock;
    this.executor =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread thread = new Thread(r, "schedule-keeper");
              thread.setDaemon(true);
              return thread;
            });
    Gauge.builder("delayedtask.schedule.waiting", counts, c -> c.get().waiting())
        .description("Schedule entries waiting for their due time")
        .register(registry);
    Gauge.builder("delayedtask.schedule.in.flight", counts, c -> c.get().inFlight())
        .description("Schedule entries claimed and not yet acknowledged")
        .register(registry);
    Gauge.builder(
            "delayedtask.schedule.oldest.overdue",
            counts,
            c -> c.get().oldestOverdue().toMillis() / 1000.0)
        .description("Seconds the oldest due entry has been waiting past its due time")
        .baseUnit("seconds")
        .register(registry);
    Gauge.builder("delayedtask.redis.up", this, k -> k.redisReachable() ? 1 : 0)
        .description("1 when Redis answered this instance's last probe, else 0")
        .register(registry);
    // Repairs right after becoming leader or a Redis restart/failover are expected (the schedule is
    // rebuilt), and so are entries of tasks created moments before a resync; entries of tasks the
    // reconciler had handled, found missing or early by a periodic resync, mean the index drifted.
    driftRepairs =
        Counter.builder("delayedtask.resync.drift.repairs")
            .description(
                "Entries of already reconciled tasks that a periodic resync (not one after leadership "
                    + "or a Redis restart) had to add or move")
            .register(registry);
  }

  public void start() {
    executor.scheduleWithFixedDelay(this::beat, 0, beat.toMillis(), TimeUnit.MILLISECONDS);
  }

  /**
   * Leader only: resync at once, on the keeper's own thread, and from now on. Not in the caller's
   * thread: becoming leader calls it from the leader-election callback, and JOSDK starts handling
   * events only once that callback returns (LeaderElectionManager), so a resync there (cold
   * connections, GETs of unknown entries) held up every reconcile and firing of a new leader for
   * seconds. A resync that cannot run yet (Redis down, the task cache not synced) stays wanted and
   * runs on a later beat.
   */
  public void activate() {
    CompletableFuture<Void> first = new CompletableFuture<>();
    firstResync = first;
    active = true;
    onActivate.forEach(listener -> listener.accept(first));
    requestResync();
  }

  public void deactivate() {
    active = false;
    firstResync.complete(null);
  }

  /**
   * {@code listener} is told of each activation, with a future that completes once its first resync
   * has written the missing entries (before it checks those of tasks that are gone), or has failed
   * on anything but a cache not synced yet, or on deactivation.
   */
  public void onActivate(Consumer<CompletableFuture<Void>> listener) {
    onActivate.add(listener);
  }

  /**
   * A schedule write failed: the next beat resyncs (once Redis answers). Cheap, so a reconcile may
   * call it for every write that failed during an outage.
   */
  public void scheduleBehind() {
    resyncWanted = true;
  }

  public void requestResync() {
    resyncWanted = true;
    if (!executor.isShutdown()) {
      executor.execute(this::beat);
    }
  }

  /** Redis answered the last probe. */
  public boolean redisReachable() {
    return Boolean.TRUE.equals(reachable);
  }

  private synchronized void beat() {
    String seen;
    try {
      seen = schedule.serverIdentity();
      counts.set(schedule.counts());
      reachable(true, null);
    } catch (RuntimeException e) {
      reachable(false, e);
      return;
    }
    if (identity != null && !Objects.equals(identity, seen)) {
      LOG.warn(
          "Redis server identity changed (restart or failover); rebuilding the schedule from the DelayedTasks");
      resyncWanted = true;
    }
    identity = seen;
    Instant now = clock.instant();
    if (active && (resyncWanted || !now.isBefore(nextResync))) {
      boolean periodic = !resyncWanted;
      try {
        CompletableFuture<Void> first = firstResync;
        ScheduleResync.Repairs repairs = resync.run(() -> first.complete(null));
        if (periodic) {
          driftRepairs.increment(repairs.ofSeenTasks());
        }
        resyncWanted = false;
        nextResync = now.plus(resyncInterval);
        firstResync.complete(null);
      } catch (ScheduleResync.CacheNotSynced e) {
        LOG.debug("Resync waits for the task cache: {}", e.getMessage());
        if (!firstResync.isDone() && !executor.isShutdown()) {
          // A new leader's other reconciles wait for this resync (reconcile/ReconcileExecutor):
          // look again soon.
          executor.schedule(this::beat, CACHE_SYNC_RECHECK.toMillis(), TimeUnit.MILLISECONDS);
        }
      } catch (RuntimeException e) {
        LOG.warn("Resync failed, will try again: {}", e.toString());
        firstResync.complete(null);
      }
    }
  }

  private void reachable(boolean now, RuntimeException error) {
    Boolean before = reachable;
    reachable = now;
    if (before == null || before != now) {
      if (now) {
        LOG.info("Redis is reachable");
        if (before != null) {
          // Schedule writes made while Redis was away were not retried one by one: repair in bulk.
          resyncWanted = true;
        }
      } else {
        LOG.warn("Redis is unreachable, not ready; retrying: {}", error.toString());
      }
    }
  }

  @Override
  public void close() {
    executor.shutdownNow();
    try {
      executor.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
