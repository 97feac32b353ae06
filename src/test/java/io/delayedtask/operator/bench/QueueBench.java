package io.delayedtask.operator.bench;

import io.delayedtask.operator.schedule.RedisConnections;
import io.delayedtask.operator.schedule.RedisSchedule;
import io.delayedtask.operator.testing.RedisProcess;

/**
 * What the queue benchmarks ({@code Queue*} mains in this package) share besides {@link
 * BenchReport}: the schedule they measure.
 */
final class QueueBench {
  private QueueBench() {}

  /**
   * The operator's schedule over {@code redis}, one shard, keys under {@code prefix}, its queues'
   * limits known.
   */
  static RedisSchedule schedule(RedisProcess redis, String prefix) {
    RedisSchedule schedule =
        new RedisSchedule(RedisConnections.standalone(redis.uri()), prefix, 1, "bench");
    schedule.queueLimitsKnown();
    return schedule;
  }
}
