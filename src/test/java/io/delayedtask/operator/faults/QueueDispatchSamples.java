package io.delayedtask.operator.faults;

import io.lettuce.core.RedisClient;
import io.lettuce.core.TransactionResult;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.locks.LockSupport;

/**
 * A queue's claims as they happen, from Redis: every few milliseconds, in one MULTI, Redis's TIME
 * and the queue bucket's {@code dispatched} count, which queue-claim.lua raises in the step that
 * takes each claim's token (a claim taken again after a takeover counts again: it took a token
 * again). A rise first seen at one sample was claimed after the sample before it, so the claims
 * counted between two samples all lie in a window no longer than the samples' distance: the bound
 * checked over those distances is looser than over the claims' own times, and never fails where the
 * claims kept it.
 */
final class QueueDispatchSamples implements AutoCloseable {
  /** Redis's TIME (microseconds) and the queue's dispatched count then. */
  record Sample(long micros, long dispatched) {
    Instant at() {
      return Instant.EPOCH.plusNanos(micros * 1_000);
    }
  }

  /** The window that exceeds the bound most, and by how much (negative: every window within it). */
  record Worst(Sample from, Sample to, double bound, double excess) {}

  private final RedisClient client;
  private final String bucketKey;
  private final Thread sampler;

  /** The samples at which the count rose, each preceded by the sample before the rise. */
  private final List<Sample> kept = new ArrayList<>();

  private volatile Sample latest;
  private volatile RuntimeException failure;
  private volatile boolean running = true;

  private QueueDispatchSamples(String redisUri, String bucketKey) {
    this.client = RedisClient.create(redisUri);
    this.bucketKey = bucketKey;
    StatefulRedisConnection<String, String> connection = client.connect();
    this.sampler = new Thread(() -> sample(connection), "queue-dispatch-samples");
    sampler.setDaemon(true);
  }

  /**
   * Starts sampling the queue whose bucket hash is {@code bucketKey}, in the Redis at {@code
   * redisUri}.
   */
  static QueueDispatchSamples start(String redisUri, String bucketKey) {
    QueueDispatchSamples samples = new QueueDispatchSamples(redisUri, bucketKey);
    samples.sampler.start();
    return samples;
  }

  private void sample(StatefulRedisConnection<String, String> connection) {
    RedisCommands<String, String> redis = connection.sync();
    Sample previous = null;
    try {
      while (running) {
        redis.multi();
        redis.time();
        redis.hget(bucketKey, "dispatched");
        TransactionResult result = redis.exec();
        List<String> time = result.get(0);
        String dispatched = result.get(1);
        Sample now =
            new Sample(
                Long.parseLong(time.get(0)) * 1_000_000 + Long.parseLong(time.get(1)),
                dispatched == null ? 0 : Long.parseLong(dispatched));
        synchronized (kept) {
          if (previous == null) {
            kept.add(now);
          } else if (now.dispatched() != previous.dispatched()) {
            if (kept.get(kept.size() - 1) != previous) {
              kept.add(previous);
            }
            kept.add(now);
          }
        }
        previous = now;
        latest = now;
        LockSupport.parkNanos(
            Duration.ofMillis(2).toNanos()); // pacing the samples, not waiting for a result
      }
    } catch (RuntimeException e) {
      failure = e;
    } finally {
      connection.close();
    }
  }

  /** The count at the latest sample (0 before the first). */
  long dispatched() {
    rethrow();
    Sample last = latest;
    return last == null ? 0 : last.dispatched();
  }

  /** The kept samples so far, oldest first. */
  List<Sample> samples() {
    rethrow();
    synchronized (kept) {
      return List.copyOf(kept);
    }
  }

  /**
   * Around the death at {@code deadAt} of the only claimer: the last rise it made (seen at latest
   * by the first sample after its death, which holds all it claimed) and the next rise, another
   * claimer's first; empty while nobody has claimed since.
   */
  Optional<Takeover> takeoverAfter(Instant deadAt) {
    long micros = micros(deadAt);
    List<Sample> all = samples();
    int afterDeath = 0;
    while (afterDeath < all.size() && all.get(afterDeath).micros() <= micros) {
      afterDeath++;
    }
    if (afterDeath == 0 || afterDeath >= all.size()) {
      return Optional.empty();
    }
    long left = all.get(afterDeath).dispatched();
    Sample lastRise = null;
    for (int i = 1; i <= afterDeath; i++) {
      if (all.get(i).dispatched() > all.get(i - 1).dispatched()) {
        lastRise = all.get(i);
      }
    }
    Sample lastBefore = lastRise;
    return all.subList(afterDeath, all.size()).stream()
        .filter(sample -> sample.dispatched() > left)
        .findFirst()
        .filter(first -> lastBefore != null)
        .map(first -> new Takeover(lastBefore, first));
  }

  /** The dead claimer's last rise and the next claimer's first. */
  record Takeover(Sample lastBefore, Sample firstAfter) {
    Duration gap() {
      return Duration.ofNanos((firstAfter.micros() - lastBefore.micros()) * 1_000);
    }
  }

  /**
   * Over every pair of samples, the claims between them against {@code burst + rate × their
   * distance + rate × 1 ms}: the last term because queue-claim.lua reads TIME in whole
   * milliseconds, so between two claims the bucket may refill for up to 1 ms more than passed.
   */
  Worst worstWindow(int burst, double rate) {
    List<Sample> all = samples();
    Worst worst = null;
    for (int i = 0; i < all.size(); i++) {
      for (int j = i + 1; j < all.size(); j++) {
        Sample from = all.get(i);
        Sample to = all.get(j);
        double bound = burst + rate * (to.micros() - from.micros() + 1_000) / 1_000_000.0;
        double excess = (to.dispatched() - from.dispatched()) - bound;
        if (worst == null || excess > worst.excess()) {
          worst = new Worst(from, to, bound, excess);
        }
      }
    }
    return worst;
  }

  private void rethrow() {
    if (failure != null) {
      throw new IllegalStateException("sampling the queue's dispatches failed", failure);
    }
  }

  private static long micros(Instant at) {
    return at.getEpochSecond() * 1_000_000 + at.getNano() / 1_000;
  }

  @Override
  public void close() {
    running = false;
    try {
      sampler.join(Duration.ofSeconds(5).toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    client.shutdown();
  }
}
