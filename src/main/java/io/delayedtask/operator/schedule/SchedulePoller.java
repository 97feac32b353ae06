package io.delayedtask.operator.schedule;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Claims due entries and hands each to an {@link AsyncDueEntryHandler}, which settles the claim
 * when it is done (the operator's: the reconcile of the entry's task, leader.DueClaims).
 *
 * <p>One loop thread: claim (one round trip), dispatch the entries, and then either claim again at
 * once (the cap left due entries behind) or sleep until the next due time, translated from the
 * Redis clock into a local wait ({@code nextDue - serverTime}, so local clock skew does not
 * matter), at most {@link Settings#maxIdleSleep()}. {@link #wake()} and the schedule's wake-up
 * notifications (in-process writes, and other processes' through pub/sub) end the sleep early when
 * an entry is due before it ends. Acknowledgements are batched by one flusher thread.
 * Acknowledgements and releases carry the claim's token ({@link ClaimedEntry#token()}): a handler
 * that outlived its claim lease (a pause, a slow API server) and whose entry another poller claimed
 * again meanwhile acknowledges or releases nothing, and the other poller's claim stays in flight.
 *
 * <p>Redis being down is not fatal: the loop backs off (up to the idle cap), logs once per change
 * of state, and keeps going. At most {@code 2 × batchSize} claims are handled or queued at once, so
 * a slow handler does not pile up claims whose leases run out.
 *
 * <p>Retries have one policy, here: a claim settled with {@link Disposition.Backoff} or failed goes
 * back at {@code claimedAt + backoff(attempt)}, the attempt counted per entry id until the entry is
 * acknowledged ({@link #backoff}). {@code claimedAt} is the Redis clock at the claim, so a local
 * clock that lags Redis's cannot make a retry due at once.
 *
 * <p>Every time used here is the Redis clock (from the claims) or the monotonic {@link
 * System#nanoTime()} for local waits; the local wall clock is never consulted.
 */
public final class SchedulePoller implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(SchedulePoller.class);
  private static final Duration FIRST_FAILURE_BACKOFF = Duration.ofMillis(100);
  private static final int MAX_TRACKED_RETRIES = 10_000;

  /**
   * @param batchSize entries per claim (capped at {@link RedisSchedule#MAX_CLAIM})
   * @param lease how long a claim is ours before it returns to the due set
   * @param maxIdleSleep the longest sleep without a claim: the safety net for lost wake-ups
   * @param retryBase first backoff of a claim that failed; doubles per attempt
   * @param retryMax longest backoff
   * @param stopTimeout how long {@link #stop()} waits for handlers in progress
   */
  public record Settings(
      int batchSize,
      Duration lease,
      Duration maxIdleSleep,
      Duration retryBase,
      Duration retryMax,
      Duration stopTimeout) {
    public Settings {
      if (batchSize < 1 || batchSize > RedisSchedule.MAX_CLAIM) {
        throw new IllegalArgumentException(
            "batchSize must be from 1 to " + RedisSchedule.MAX_CLAIM + ", got " + batchSize);
      }
      requirePositive("lease", lease);
      requirePositive("maxIdleSleep", maxIdleSleep);
      requirePositive("retryBase", retryBase);
      requirePositive("retryMax", retryMax);
      Objects.requireNonNull(stopTimeout, "stopTimeout");
    }

    /**
     * 100 per claim, 60 s lease (the operator sets DELAYEDTASK_CLAIM_LEASE_SECONDS), 5 s idle cap,
     * retries from 0.5 s to 30 s (a task is late by at most about 30 s after its failure's cause
     * went away), 30 s to stop.
     */
    public static Settings defaults() {
      return new Settings(
          100,
          Duration.ofSeconds(60),
          Duration.ofSeconds(5),
          Duration.ofMillis(500),
          Duration.ofSeconds(30),
          Duration.ofSeconds(30));
    }

    public Settings withBatchSize(int value) {
      return new Settings(value, lease, maxIdleSleep, retryBase, retryMax, stopTimeout);
    }

    public Settings withLease(Duration value) {
      return new Settings(batchSize, value, maxIdleSleep, retryBase, retryMax, stopTimeout);
    }

    public Settings withMaxIdleSleep(Duration value) {
      return new Settings(batchSize, lease, value, retryBase, retryMax, stopTimeout);
    }

    public Settings withRetry(Duration base, Duration max) {
      return new Settings(batchSize, lease, maxIdleSleep, base, max, stopTimeout);
    }

    public Settings withStopTimeout(Duration value) {
      return new Settings(batchSize, lease, maxIdleSleep, retryBase, retryMax, value);
    }

    private static void requirePositive(String name, Duration value) {
      if (value == null || value.isNegative() || value.isZero()) {
        throw new IllegalArgumentException(name + " must be a positive duration, got " + value);
      }
    }
  }

  /** Counters since construction. */
  public record Stats(
      long claims, long claimed, long acknowledged, long released, long handlerFailures) {}

  private final TaskSchedule schedule;
  private final AsyncDueEntryHandler handler;
  private final Settings settings;

  private final ReentrantLock lock = new ReentrantLock();
  private final Condition wakeup = lock.newCondition();

  /** Redis-clock instant the loop sleeps until; null while it is not sleeping. */
  private Instant sleepingUntil;

  private boolean wakeRequested;

  private final Queue<ClaimedEntry> pendingAcks = new ConcurrentLinkedQueue<>();
  private final AtomicBoolean ackFlushScheduled = new AtomicBoolean();

  /** Failed attempts per entry id, for the backoff; forgotten when the entry is acknowledged. */
  private final Map<String, Integer> attempts =
      Collections.synchronizedMap(
          new LinkedHashMap<>(16, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, Integer> eldest) {
              return size() > MAX_TRACKED_RETRIES;
            }
          });

  private final AtomicLong claims = new AtomicLong();
  private final AtomicLong claimed = new AtomicLong();
  private final AtomicLong acknowledged = new AtomicLong();
  private final AtomicLong released = new AtomicLong();
  private final AtomicLong handlerFailures = new AtomicLong();

  private volatile boolean running;
  private Thread loop;
  private ExecutorService ackFlusher;
  private Semaphore capacity;
  private AutoCloseable wakeupSubscription;

  /**
   * A poller that hands each claim over and is told later what to do with it. Claims handed over
   * and not yet settled count against the {@code 2 × batchSize} the poller holds at once; one not
   * settled within the claim lease is given up here and returns to the due set with its lease.
   */
  public SchedulePoller(TaskSchedule schedule, AsyncDueEntryHandler handler, Settings settings) {
    this.schedule = Objects.requireNonNull(schedule);
    this.handler = Objects.requireNonNull(handler);
    this.settings = Objects.requireNonNull(settings);
  }

  /** Starts the loop; no-op if running. May be called again after {@link #stop()}. */
  public synchronized void start() {
    if (running) {
      return;
    }
    running = true;
    capacity = new Semaphore(settings.batchSize() * 2);
    ackFlusher = Executors.newSingleThreadExecutor(threads("schedule-ack"));
    wakeupSubscription = schedule.onWakeup(this::wake);
    loop = threads("schedule-poller").newThread(this::runLoop);
    loop.start();
  }

  /**
   * Stops claiming, waits for the loop and for every claim handed over to be settled (up to the
   * stop timeout; a claim still unsettled then keeps its lease and returns to the schedule when it
   * runs out), and flushes acks.
   */
  public synchronized void stop() {
    if (!running) {
      return;
    }
    running = false;
    wake();
    closeQuietly(wakeupSubscription);
    try {
      loop.join();
      // Every claim handed over holds one permit until it is settled.
      int all = settings.batchSize() * 2;
      if (capacity.tryAcquire(all, settings.stopTimeout().toMillis(), TimeUnit.MILLISECONDS)) {
        capacity.release(all);
      } else {
        LOG.warn(
            "{} claims still unsettled after {}; they return to the schedule when their lease runs out",
            all - capacity.availablePermits(),
            settings.stopTimeout());
      }
      ackFlusher.shutdown();
      ackFlusher.awaitTermination(settings.stopTimeout().toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    flushAcks();
  }

  @Override
  public void close() {
    stop();
  }

  public boolean isRunning() {
    return running;
  }

  public Stats stats() {
    return new Stats(
        claims.get(), claimed.get(), acknowledged.get(), released.get(), handlerFailures.get());
  }

  /** Ends the current sleep (or the next one) and claims at once. Harmless when nothing is due. */
  public void wake() {
    lock.lock();
    try {
      wakeRequested = true;
      wakeup.signalAll();
    } finally {
      lock.unlock();
    }
  }

  /**
   * Wakes the loop if an entry due at {@code due} would otherwise wait for the current sleep to
   * end.
   */
  public void wake(Instant due) {
    lock.lock();
    try {
      if (sleepingUntil == null || due.isBefore(sleepingUntil)) {
        wakeRequested = true;
        wakeup.signalAll();
      }
    } finally {
      lock.unlock();
    }
  }

  private void runLoop() {
    Duration failureBackoff = FIRST_FAILURE_BACKOFF;
    boolean available = true;
    while (running) {
      int permits = acquireCapacity();
      if (permits == 0) {
        continue;
      }
      ClaimBatch batch;
      long claimedAtNanos;
      try {
        batch = schedule.claimDue(permits, settings.lease());
        claimedAtNanos = System.nanoTime();
      } catch (RuntimeException e) {
        capacity.release(permits);
        if (available) {
          available = false;
          LOG.warn("Cannot claim due entries, retrying with backoff: {}", e.getMessage());
        }
        sleep(failureBackoff, null, System.nanoTime());
        failureBackoff = min(failureBackoff.multipliedBy(2), settings.maxIdleSleep());
        continue;
      }
      if (!available) {
        available = true;
        LOG.info("Claiming due entries again");
      }
      failureBackoff = FIRST_FAILURE_BACKOFF;
      claims.incrementAndGet();
      claimed.addAndGet(batch.entries().size());
      capacity.release(permits - batch.entries().size());
      for (ClaimedEntry entry : batch.entries()) {
        handOver(entry);
      }
      if (batch.moreDue()) {
        continue; // the cap left due entries behind: drain batch after batch
      }
      Duration untilNext =
          batch
              .nextDue()
              .map(next -> Duration.between(batch.serverTime(), next))
              .orElse(settings.maxIdleSleep());
      Duration wait = min(untilNext, settings.maxIdleSleep());
      sleep(wait, batch.serverTime().plus(wait), claimedAtNanos);
    }
  }

  /**
   * Blocks until at least one claim slot is free; returns how many (at most batchSize), 0 if
   * stopping.
   */
  private int acquireCapacity() {
    try {
      while (running) {
        if (capacity.tryAcquire(settings.maxIdleSleep().toMillis(), TimeUnit.MILLISECONDS)) {
          int more = Math.min(settings.batchSize() - 1, capacity.availablePermits());
          if (more > 0 && capacity.tryAcquire(more)) {
            return more + 1;
          }
          return 1;
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      running = false;
    }
    return 0;
  }

  /**
   * Sleeps {@code wait} from {@code fromNanos} unless woken; {@code until} is the Redis-clock end
   * (null: any wake-up).
   */
  private void sleep(Duration wait, Instant until, long fromNanos) {
    lock.lock();
    try {
      if (wakeRequested || !running) {
        wakeRequested = false;
        return;
      }
      sleepingUntil = until;
      long deadline = fromNanos + wait.toNanos();
      long remaining;
      while (!wakeRequested && running && (remaining = deadline - System.nanoTime()) > 0) {
        wakeup.awaitNanos(remaining);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      running = false;
    } finally {
      wakeRequested = false;
      sleepingUntil = null;
      lock.unlock();
    }
  }

  private void handOver(ClaimedEntry entry) {
    CompletableFuture<Disposition> settled;
    try {
      settled = handler.handle(entry).toCompletableFuture();
    } catch (RuntimeException e) {
      settled = CompletableFuture.failedFuture(e);
    }
    settled
        .orTimeout(settings.lease().toMillis(), TimeUnit.MILLISECONDS)
        .whenComplete((disposition, error) -> settle(entry, disposition, error));
  }

  private void settle(ClaimedEntry entry, Disposition disposition, Throwable error) {
    try {
      if (error == null && disposition instanceof Disposition.RetryAt retry) {
        release(entry, retry.when());
      } else if (error == null && disposition instanceof Disposition.Backoff failed) {
        retryWithBackoff(entry, failed.why(), null);
      } else if (error == null) {
        attempts.remove(entry.id());
        pendingAcks.add(entry);
        scheduleAckFlush();
      } else if (unwrap(error) instanceof TimeoutException) {
        LOG.warn(
            "{} was not settled within its claim lease of {}; it returns to the schedule with the lease",
            entry.id(),
            settings.lease());
      } else {
        handlerFailures.incrementAndGet();
        retryWithBackoff(entry, "the handler failed", unwrap(error));
      }
    } finally {
      capacity.release();
    }
  }

  private static Throwable unwrap(Throwable error) {
    return error instanceof CompletionException && error.getCause() != null
        ? error.getCause()
        : error;
  }

  /** The one retry policy for a claim: counted per entry, timed from the claim's Redis clock. */
  private void retryWithBackoff(ClaimedEntry entry, String why, Throwable error) {
    int attempt = attempts.merge(entry.id(), 1, Integer::sum);
    Duration backoff = backoff(attempt);
    LOG.warn(
        "{} failed (attempt {}), retrying {} after its claim: {}",
        entry.id(),
        attempt,
        backoff,
        why,
        error);
    release(entry, entry.claimedAt().plus(backoff));
  }

  /** {@code retryBase × 2^(attempt-1)}, at most {@code retryMax}. */
  Duration backoff(int attempt) {
    Duration backoff = settings.retryBase();
    for (int i = 1; i < attempt && backoff.compareTo(settings.retryMax()) < 0; i++) {
      backoff = backoff.multipliedBy(2);
    }
    return min(backoff, settings.retryMax());
  }

  private void release(ClaimedEntry entry, Instant retryAt) {
    try {
      schedule.release(entry, retryAt);
      released.incrementAndGet();
    } catch (RuntimeException e) {
      LOG.warn(
          "Could not release {}; it returns to the schedule when its lease expires: {}",
          entry.id(),
          e.getMessage());
    }
  }

  private void scheduleAckFlush() {
    if (ackFlushScheduled.compareAndSet(false, true)) {
      try {
        ackFlusher.execute(this::flushAcksLoop);
      } catch (java.util.concurrent.RejectedExecutionException stopping) {
        ackFlushScheduled.set(false); // stop() flushes what is left
      }
    }
  }

  /** Acks accumulate while a flush is in flight, so under load one call acknowledges many. */
  private void flushAcksLoop() {
    while (true) {
      flushAcks();
      ackFlushScheduled.set(false);
      if (pendingAcks.isEmpty() || !ackFlushScheduled.compareAndSet(false, true)) {
        return;
      }
    }
  }

  private void flushAcks() {
    List<ClaimedEntry> batch = new ArrayList<>();
    for (ClaimedEntry entry; (entry = pendingAcks.poll()) != null; ) {
      batch.add(entry);
    }
    if (batch.isEmpty()) {
      return;
    }
    try {
      schedule.acknowledgeAll(batch);
      acknowledged.addAndGet(batch.size());
    } catch (RuntimeException e) {
      LOG.warn(
          "Could not acknowledge {} entries; they return to the schedule when their lease expires: {}",
          batch.size(),
          e.getMessage());
    }
  }

  private static Duration min(Duration a, Duration b) {
    return a.compareTo(b) <= 0 ? a : b;
  }

  private static void closeQuietly(AutoCloseable closeable) {
    try {
      if (closeable != null) {
        closeable.close();
      }
    } catch (Exception e) {
      LOG.debug("closing the wake-up subscription failed", e);
    }
  }

  private static ThreadFactory threads(String name) {
    AtomicInteger counter = new AtomicInteger();
    return runnable -> {
      Thread thread = new Thread(runnable, name + "-" + counter.incrementAndGet());
      thread.setDaemon(true);
      return thread;
    };
  }
}
