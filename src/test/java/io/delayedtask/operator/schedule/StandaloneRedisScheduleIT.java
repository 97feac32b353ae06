package io.delayedtask.operator.schedule;

import io.delayedtask.operator.testing.RedisProcess;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The schedule suite against one standalone redis-server with one shard. */
class StandaloneRedisScheduleIT extends AbstractRedisScheduleIT {
  private RedisProcess redis;

  @BeforeAll
  void startRedis() {
    redis = RedisProcess.start();
  }

  @AfterAll
  void stopRedis() {
    redis.close();
  }

  @Override
  protected RedisConnections connect() {
    return RedisConnections.standalone(
        redis.uri(), Optional.empty(), RedisConnections.DEFAULT_TIMEOUT);
  }

  @Override
  protected int shards() {
    return 1;
  }

  @Override
  protected void flushScripts() {
    RedisClient client = RedisClient.create(redis.uri());
    try (StatefulRedisConnection<String, String> connection = client.connect()) {
      connection.sync().scriptFlush();
    } finally {
      client.shutdown();
    }
  }
}
