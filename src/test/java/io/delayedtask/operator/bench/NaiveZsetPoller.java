package io.delayedtask.operator.bench;

import io.lettuce.core.Range;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

/**
 * The textbook Redis delay queue: ZADD to schedule; a loop that every {@code interval} reads every
 * due member with ZRANGEBYSCORE (due by this host's clock) and claims each with its own ZREM,
 * firing it only if that ZREM removed it (so competing pollers do not fire it twice).
 */
final class NaiveZsetPoller implements DelayQueueUnderTest {
  private static final String KEY = "bench:naive:schedule";

  private final Duration interval;
  private final RedisClient client;
  private final StatefulRedisConnection<String, String> connection;
  private final RedisCommands<String, String> redis;
  private volatile boolean running;
  private Thread poller;

  NaiveZsetPoller(String uri, Duration interval) {
    this.interval = interval;
    this.client = RedisClient.create(uri);
    this.connection = client.connect();
    this.redis = connection.sync();
  }

  @Override
  public String name() {
    return "ZRANGEBYSCORE + ZREM, poll every "
        + (interval.toMillis() >= 1000 ? interval.toSeconds() + " s" : interval.toMillis() + " ms");
  }

  @Override
  public void start(DeliverySink sink) {
    running = true;
    poller = new Thread(() -> pollUntilClosed(sink), "naive-poller-" + interval.toMillis());
    poller.setDaemon(true);
    poller.start();
  }

  private void pollUntilClosed(DeliverySink sink) {
    while (running) {
      try {
        List<String> due = redis.zrangebyscore(KEY, Range.create(0L, System.currentTimeMillis()));
        for (String id : due) {
          if (redis.zrem(KEY, id) == 1) {
            sink.delivered(id);
          }
        }
      } catch (RuntimeException e) {
        if (running) {
          System.err.println(name() + ": " + e);
        }
      }
      LockSupport.parkNanos(interval.toNanos());
    }
  }

  @Override
  public void schedule(String id, long dueEpochMillis) {
    redis.zadd(KEY, dueEpochMillis, id);
  }

  @Override
  public void close() {
    running = false;
    if (poller != null) {
      poller.interrupt();
      try {
        poller.join(5_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    connection.close();
    client.shutdown();
  }
}
