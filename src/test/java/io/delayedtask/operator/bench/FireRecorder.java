package io.delayedtask.operator.bench;

import java.time.Duration;
import java.time.Instant;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.SynchronizedHistogram;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;

/**
 * Records one phase's deliveries: fire lag (delivery time minus due time, in microseconds, by this
 * JVM's wall clock), entries fired before their due time, duplicates, and the last delivery.
 *
 * <p>Redis runs on this host, so the JVM's wall clock and the Redis {@code TIME} are the same
 * kernel clock (CLOCK_REALTIME); judging every system by the local clock at the moment its consumer
 * receives the entry treats them all alike.
 */
final class FireRecorder implements DeliverySink {
  private static final long MAX_TRACKED_LAG_MICROS = TimeUnit.HOURS.toMicros(1);

  private final Histogram lagMicros = new SynchronizedHistogram(MAX_TRACKED_LAG_MICROS, 3);
  private final Set<String> seen = ConcurrentHashMap.newKeySet();
  private final AtomicLong delivered = new AtomicLong();
  private final AtomicLong early = new AtomicLong();
  private final AtomicLong earlyByServerClock = new AtomicLong();
  private final AtomicLong duplicates = new AtomicLong();
  private final AtomicLong lastDeliveryMicros = new AtomicLong(Long.MIN_VALUE);

  @Override
  public void delivered(String id) {
    long now = epochMicros(Instant.now());
    long lag = now - BenchIds.dueEpochMillis(id) * 1000;
    if (lag < 0) {
      early.incrementAndGet();
    }
    lagMicros.recordValue(Math.min(Math.max(lag, 0), MAX_TRACKED_LAG_MICROS));
    if (!seen.add(id)) {
      duplicates.incrementAndGet();
    }
    delivered.incrementAndGet();
    lastDeliveryMicros.accumulateAndGet(now, Math::max);
  }

  @Override
  public void claimedByServerClock(String id, Instant claimedAt) {
    if (epochMicros(claimedAt) < BenchIds.dueEpochMillis(id) * 1000) {
      earlyByServerClock.incrementAndGet();
    }
  }

  /** Waits until {@code expected} distinct entries arrived; false if the time ran out first. */
  boolean awaitDistinct(long expected, Duration timeout) {
    try {
      Awaitility.await()
          .atMost(timeout)
          .pollInterval(Duration.ofMillis(5))
          .pollDelay(Duration.ZERO)
          .until(() -> seen.size() >= expected);
      return true;
    } catch (ConditionTimeoutException e) {
      return false;
    }
  }

  LagSummary summary(long scheduled) {
    Histogram copy = lagMicros.copy();
    return new LagSummary(
        scheduled,
        seen.size(),
        duplicates.get(),
        early.get(),
        earlyByServerClock.get(),
        copy.getTotalCount() == 0 ? 0 : copy.getValueAtPercentile(50) / 1000.0,
        copy.getTotalCount() == 0 ? 0 : copy.getValueAtPercentile(99) / 1000.0,
        copy.getTotalCount() == 0 ? 0 : copy.getMaxValue() / 1000.0);
  }

  long distinct() {
    return seen.size();
  }

  /** Epoch microseconds of the latest delivery, or {@link Long#MIN_VALUE} if none. */
  long lastDeliveryMicros() {
    return lastDeliveryMicros.get();
  }

  static long epochMicros(Instant instant) {
    return instant.getEpochSecond() * 1_000_000 + instant.getNano() / 1000;
  }

  /** Lag in milliseconds; {@code scheduled - fired} entries never arrived. */
  record LagSummary(
      long scheduled,
      long fired,
      long duplicates,
      long early,
      long earlyByServerClock,
      double p50Millis,
      double p99Millis,
      double maxMillis) {}
}
