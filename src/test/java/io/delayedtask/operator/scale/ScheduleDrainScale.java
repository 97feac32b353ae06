package io.delayedtask.operator.scale;

import io.delayedtask.operator.schedule.Disposition;
import io.delayedtask.operator.schedule.RedisConnections;
import io.delayedtask.operator.schedule.RedisSchedule;
import io.delayedtask.operator.schedule.SchedulePoller;
import io.delayedtask.operator.testing.BuildIdentity;
import io.delayedtask.operator.testing.RedisProcess;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScoredValue;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Scale run (not a test): 100,000 schedule entries due at the same instant, drained by one poller
 * that acknowledges at once. Prints the drain time as {@code docs/benchmark.md} defines it (the
 * last delivery to the handler minus the due instant), from the due instant to every
 * acknowledgement flushed (waiting and in-flight both empty), and the longest Redis commands
 * (SLOWLOG). The entries are loaded due {@code -DloadMarginMillis} after the load starts, the
 * poller started before that instant (it sleeps until it), as the benchmark's drain does.
 *
 * <pre>
 * mvn -o test-compile exec:java -Dexec.classpathScope=test \
 *   -Dexec.mainClass=io.delayedtask.operator.scale.ScheduleDrainScale [-Dentries=100000] \
 *   [-DloadMarginMillis=2000+entries/4]
 * </pre>
 */
public final class ScheduleDrainScale {
  private ScheduleDrainScale() {}

  public static void main(String[] args) throws Exception {
    int entries = Integer.getInteger("entries", 100_000);
    long loadMargin = Long.getLong("loadMarginMillis", 2_000 + entries / 4);
    System.out.printf(
        "===== ScheduleDrainScale, %,d entries due at one instant; %s; %s =====%n",
        entries, BuildIdentity.classes(RedisSchedule.class), ProcessMeter.loadAverage());
    try (RedisProcess redis = RedisProcess.start()) {
      RedisClient admin = RedisClient.create(redis.uri());
      try (StatefulRedisConnection<String, String> connection = admin.connect();
          RedisSchedule schedule =
              new RedisSchedule(
                  RedisConnections.standalone(
                      redis.uri(), Optional.empty(), RedisConnections.DEFAULT_TIMEOUT),
                  "scale",
                  RedisSchedule.DEFAULT_SHARDS)) {
        RedisCommands<String, String> redisCommands = connection.sync();
        // The due instant by Redis's clock; Redis runs on this host, so the JVM's wall clock is the
        // same clock.
        long instant =
            io.delayedtask.operator.schedule.ScheduleProbe.serverTime(schedule).toEpochMilli()
                + loadMargin;
        // Loaded straight into the due set (the same ZADD schedule.lua does), 1000 per command.
        long loadStart = System.nanoTime();
        String dueKey = schedule.keys().due(0);
        List<ScoredValue<String>> chunk = new ArrayList<>();
        for (int i = 0; i < entries; i++) {
          chunk.add(ScoredValue.just(instant, "scale/task-" + i + "/uid-" + i));
          if (chunk.size() == 1000 || i == entries - 1) {
            redisCommands.zadd(dueKey, chunk.toArray(ScoredValue[]::new));
            chunk.clear();
          }
        }
        System.out.printf(
            "loaded %,d entries due at the same instant in %d ms%s%n",
            entries,
            (System.nanoTime() - loadStart) / 1_000_000,
            System.currentTimeMillis() >= instant
                ? " (LATE: the due instant passed while loading; raise -DloadMarginMillis)"
                : "");

        redisCommands.configSet("slowlog-log-slower-than", "100"); // microseconds
        redisCommands.configSet("slowlog-max-len", "100000");
        redisCommands.slowlogReset();
        AtomicLong acknowledged = new AtomicLong();
        AtomicLong lastDeliveryMillis = new AtomicLong(Long.MIN_VALUE);
        try (SchedulePoller poller =
            new SchedulePoller(
                schedule,
                io.delayedtask.operator.schedule.DueEntryHandler.blocking(
                    entry -> {
                      acknowledged.incrementAndGet();
                      lastDeliveryMillis.accumulateAndGet(System.currentTimeMillis(), Math::max);
                      return Disposition.acknowledge();
                    }),
                SchedulePoller.Settings.defaults())) {
          poller.start();
          while (schedule.counts().waiting() + schedule.counts().inFlight() > 0) {
            Thread.sleep(20); // a measuring loop, not a test: polling is the point
          }
          long flushedMs = System.currentTimeMillis() - instant;
          long drainMs = lastDeliveryMillis.get() - instant;
          System.out.printf(
              "drain time (last delivery - due instant, docs/benchmark.md): %,d ms for %,d entries "
                  + "(%,.0f entries/s)%n",
              drainMs, acknowledged.get(), acknowledged.get() * 1000.0 / Math.max(1, drainMs));
          System.out.printf(
              "due instant to acks flushed (waiting + in flight = 0, polled every 20 ms): %,d ms; "
                  + "poller stats %s%n",
              flushedMs, poller.stats());
        }
        List<Object> slowlog = redisCommands.slowlogGet(100_000);
        List<long[]> byDuration = new ArrayList<>();
        List<String> commands = new ArrayList<>();
        for (Object item : slowlog) {
          List<?> fields = (List<?>) item;
          List<?> argv = (List<?>) fields.get(3);
          byDuration.add(new long[] {(Long) fields.get(2), commands.size(), argv.size()});
          commands.add(String.valueOf(argv.get(0)) + " " + (argv.size() > 3 ? argv.get(3) : ""));
        }
        byDuration.sort((a, b) -> Long.compare(b[0], a[0]));
        System.out.printf("slowlog: %d commands over 100 us; the longest:%n", slowlog.size());
        for (long[] entry : byDuration.subList(0, Math.min(5, byDuration.size()))) {
          System.out.printf(
              "  %,d us  %s (%d args)%n", entry[0], commands.get((int) entry[1]), entry[2]);
        }
      } finally {
        admin.shutdown();
      }
    }
    System.exit(0);
  }
}
