package io.delayedtask.operator.schedule;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.delayedtask.operator.testing.RedisProcess;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.ShrinkingMode;
import net.jqwik.api.Tuple;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;
import net.jqwik.api.statistics.Statistics;

/**
 * The token bucket of queue-claim.lua, on a real redis-server, against a model of a few lines
 * (docs/reference.md, "Queues"): a bucket of maxBurst tokens, full when it is first used, refilled
 * at maxDispatchesPerSecond by the time since its last refill and never above maxBurst, nothing
 * refilled by a clock that went back; a claim takes at most as many entries as whole tokens (and
 * free concurrency slots, and what it was asked for), one token each; when tokens are what held it,
 * the next whole token's time. Over every run, in any window of t seconds at most maxBurst + rate ×
 * t entries are claimed.
 *
 * <p>The script reads the Redis clock (TIME), which a test cannot move, and returns the time it
 * read. Time passing is simulated by moving the bucket's last refill ({@code at}) back by that
 * much, which the script cannot tell from time passing (it refills by {@code now - at}); a clock
 * that went back, by moving it ahead. Each step is thereby checked exactly, at the time the script
 * used, without waiting and without a test-only argument in the production script.
 */
class QueueBucketPropertiesIT {
  private static RedisProcess redis;
  private static RedisClient client;
  private static StatefulRedisConnection<String, String> connection;

  @BeforeContainer
  static void startRedis() {
    redis = RedisProcess.start();
    client = RedisClient.create(redis.uri());
    connection = client.connect();
  }

  @AfterContainer
  static void stopRedis() {
    connection.close();
    client.shutdown();
    redis.close();
  }

  /**
   * Before a claim: {@code advanceMs} pass (or, {@code clockBack}, the Redis clock goes back by
   * that much), {@code finished} dispatches end, {@code newlyDue} entries fall due; then a claim of
   * at most {@code max}.
   */
  record Step(int advanceMs, boolean clockBack, int finished, int newlyDue, int max) {}

  @Provide
  Arbitrary<Double> rates() {
    return Arbitraries.frequencyOf(
            Tuple.of(3, Arbitraries.doubles().between(0.01, 5).ofScale(2)),
            Tuple.of(3, Arbitraries.doubles().between(5, 200).ofScale(1)),
            Tuple.of(1, Arbitraries.doubles().between(200, 10_000).ofScale(0)))
        .filter(rate -> rate > 0);
  }

  @Provide
  Arbitrary<Integer> concurrencies() {
    return Arbitraries.integers().between(1, 12).injectNull(0.5);
  }

  @Provide
  Arbitrary<List<Step>> steps() {
    Arbitrary<Integer> advance =
        Arbitraries.frequencyOf(
            Tuple.of(3, Arbitraries.just(0)),
            Tuple.of(5, Arbitraries.integers().between(1, 1_500)),
            Tuple.of(1, Arbitraries.integers().between(1_500, 600_000)));
    Arbitrary<Step> step =
        Combinators.combine(
                advance,
                Arbitraries.integers().between(0, 9).map(n -> n == 0),
                Arbitraries.integers().between(0, 3),
                Arbitraries.integers().between(0, 15),
                Arbitraries.integers().between(1, 20))
            .as(Step::new);
    return step.list().ofMinSize(1).ofMaxSize(30);
  }

  @Property(
      shrinking =
          ShrinkingMode.BOUNDED) // tries: jqwik.tries.default, 60 (pom.xml; 1,000 with -Pthorough)
  void theBucketTakesWhatTheModelSaysAndStaysWithinBurstPlusRateTimesTime(
      @ForAll("rates") double rate,
      @ForAll("bursts") int burst,
      @ForAll("concurrencies") Integer concurrency,
      @ForAll("steps") List<Step> steps) {
    Keys keys = new Keys("bucket-" + UUID.randomUUID().toString().substring(0, 8));
    Model model = new Model(rate, burst, concurrency);
    RedisCommands<String, String> redis = connection.sync();
    List<Long> claimedAt =
        new ArrayList<>(); // simulated time (ms): the Redis clock plus the time simulated
    long simulated = 0;
    int entries = 0;
    boolean rateLimited = false;
    for (Step step : steps) {
      if (model.at != null && step.advanceMs() > 0) {
        model.at = step.clockBack() ? model.at + step.advanceMs() : model.at - step.advanceMs();
        redis.hset(keys.bucket, "at", Long.toString(model.at));
        simulated += step.clockBack() ? 0 : step.advanceMs();
      }
      int finished = (int) Math.min(step.finished(), model.running);
      if (finished > 0) {
        redis.zpopmin(keys.running, finished); // what queue-free.lua does when dispatches end
        model.running -= finished;
      }
      for (int i = 0; i < step.newlyDue(); i++, entries++) {
        redis.zadd(
            keys.due, 1_000 + entries, "ns/t" + entries + "/u"); // due long ago, oldest first
      }
      model.due += step.newlyDue();

      Claim actual =
          Claim.of(
              redis.eval(
                  LuaScript.QUEUE_CLAIM.source(),
                  ScriptOutputType.MULTI,
                  keys.all(),
                  Integer.toString(step.max()),
                  "300000",
                  "me:q:ns/queue",
                  "open",
                  Double.toString(rate),
                  Integer.toString(burst),
                  concurrency == null ? "" : Integer.toString(concurrency),
                  "-inf",
                  "500",
                  ""));
      Model.Expected expected = model.claim(actual.now, step.max());

      assertThat(actual.claimed).as("claimed at %s", step).isEqualTo(expected.claimed());
      assertThat(actual.reason).as("why the rest waits at %s", step).isEqualTo(expected.reason());
      assertThat(actual.held).as("left waiting").isEqualTo(model.due);
      assertThat(actual.nextToken)
          .as("the next whole token's time")
          .isEqualTo(expected.nextToken());
      List<String> bucket =
          redis.hmget(keys.bucket, "tokens", "at", "dispatched").stream()
              .map(value -> value.getValueOrElse(null))
              .toList();
      double stored = Double.parseDouble(bucket.get(0));
      // Lua's tostring keeps 14 significant digits: close, then the model goes on from what is
      // stored.
      assertThat(stored)
          .as("tokens left")
          .isCloseTo(
              expected.tokensLeft(), within(1e-12 * Math.max(1, Math.abs(expected.tokensLeft()))));
      assertThat(Long.parseLong(bucket.get(1)))
          .as("refilled up to the claim's time")
          .isEqualTo(actual.now);
      assertThat(bucket.get(2) == null ? 0 : Long.parseLong(bucket.get(2)))
          .as("dispatchedTotal")
          .isEqualTo(model.dispatched);
      model.tokens = stored;
      for (int i = 0; i < actual.claimed; i++) {
        claimedAt.add(actual.now + simulated);
      }
      rateLimited |= "RateLimited".equals(expected.reason());
    }
    Statistics.label("some claim was rate limited").collect(rateLimited);

    for (int i = 0; i < claimedAt.size(); i++) {
      for (int j = i; j < claimedAt.size(); j++) {
        double bound = burst + rate * (claimedAt.get(j) - claimedAt.get(i)) / 1000.0;
        assertThat((double) (j - i + 1))
            .as("claims from %d to %d ms", claimedAt.get(i), claimedAt.get(j))
            .isLessThanOrEqualTo(bound + 1e-9);
      }
    }
  }

  @Provide
  Arbitrary<Integer> bursts() {
    return Arbitraries.integers().between(1, 40);
  }

  /**
   * The bucket as the contract describes it, and the queue's due entries and running dispatches.
   */
  private static final class Model {
    record Expected(int claimed, String reason, Long nextToken, double tokensLeft) {}

    final double rate;
    final int burst;
    final Integer concurrency;
    Double tokens;
    Long at;
    long due;
    long running;
    long dispatched;

    Model(double rate, int burst, Integer concurrency) {
      this.rate = rate;
      this.burst = burst;
      this.concurrency = concurrency;
    }

    Expected claim(long now, int max) {
      double available;
      if (tokens == null) {
        available = burst; // a bucket never used starts full
      } else if (now > at) {
        available = Math.min(burst, tokens + (now - at) * rate / 1000);
      } else {
        available = Math.min(burst, tokens); // a clock that went back refills nothing
      }
      int allowed = max;
      String reason = "";
      if (Math.floor(available) < allowed) {
        allowed = (int) Math.floor(available);
        reason = "RateLimited";
      }
      if (concurrency != null && Math.max(0, concurrency - running) < allowed) {
        allowed = (int) Math.max(0, concurrency - running);
        reason = "ConcurrencyLimited";
      }
      int claimed = (int) Math.min(allowed, due);
      double left = available - claimed;
      Long nextToken =
          "RateLimited".equals(reason) ? now + (long) Math.ceil((1 - left) * 1000 / rate) : null;
      due -= claimed;
      running += claimed;
      dispatched += claimed;
      tokens = left;
      at = now;
      return new Expected(claimed, due == 0 ? "" : reason, nextToken, left);
    }
  }

  /** What queue-claim.lua returned, as far as the bucket is concerned. */
  private record Claim(long now, long held, String reason, Long nextToken, int claimed) {
    static Claim of(List<Object> result) {
      long now =
          Long.parseLong((String) result.get(0)) * 1000
              + Long.parseLong((String) result.get(1)) / 1000;
      long held = (Long) result.get(3);
      String reason = (String) result.get(4);
      Object next = result.get(5);
      Long nextToken = next instanceof Long token ? token : null;
      int reported = (int) (long) (Long) result.get(7);
      int claimed = (result.size() - 8 - reported) / 3;
      return new Claim(now, held, reason, nextToken, claimed);
    }
  }

  /** The queue's keys, as KEYS of queue-claim.lua. */
  private static final class Keys {
    final String due;
    final String running;
    final String bucket;
    private final String[] all;

    Keys(String prefix) {
      String group = prefix + ":{q:ns/queue}:";
      due = group + "due";
      running = group + "running";
      bucket = group + "bucket";
      all =
          new String[] {
            due,
            group + "inflight",
            group + "claimed",
            group + "tokens",
            group + "claimseq",
            bucket,
            running,
            group + "released"
          };
    }

    String[] all() {
      return all;
    }
  }
}
