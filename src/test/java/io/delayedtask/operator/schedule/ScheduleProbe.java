package io.delayedtask.operator.schedule;

import io.lettuce.core.ScoredValue;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** Test-only reads of a Redis schedule that the operator itself never needs. */
public final class ScheduleProbe {
  private ScheduleProbe() {}

  /** The Redis server's clock. */
  public static Instant serverTime(RedisSchedule schedule) {
    RedisConnections connections = schedule.connections();
    List<String> time = connections.await(connections.commands().time(), "TIME");
    return Instant.ofEpochSecond(Long.parseLong(time.get(0)), Long.parseLong(time.get(1)) * 1_000);
  }

  /** The earliest due time of any waiting entry, over every shard. */
  public static Optional<Instant> earliestDue(RedisSchedule schedule) {
    RedisConnections connections = schedule.connections();
    Optional<Instant> earliest = Optional.empty();
    for (int shard = 0; shard < schedule.keys().shards(); shard++) {
      for (ScoredValue<String> first :
          connections.await(
              connections.commands().zrangeWithScores(schedule.keys().due(shard), 0, 0),
              "ZRANGE due")) {
        Instant due = Instant.ofEpochMilli((long) first.getScore());
        if (earliest.isEmpty() || due.isBefore(earliest.get())) {
          earliest = Optional.of(due);
        }
      }
    }
    return earliest;
  }

  /** The resync's write of one entry: whether it wrote. */
  public static boolean repair(RedisSchedule schedule, String id, Instant due) {
    return schedule.repairAll(Map.of(id, due)).contains(id);
  }

  /** Acknowledges one claim. */
  public static void acknowledge(RedisSchedule schedule, ClaimedEntry entry) {
    schedule.acknowledgeAll(List.of(entry));
  }
}
