package io.delayedtask.operator.schedule;

import static org.assertj.core.api.Assertions.assertThat;

import io.delayedtask.operator.testing.RedisCluster;
import io.delayedtask.operator.testing.RedisProcess;
import io.lettuce.core.cluster.SlotHash;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The schedule suite against a 3-master Redis Cluster started here (slots split in three, no
 * replicas), with 3 shards, which land on different masters.
 */
class ClusterRedisScheduleIT extends AbstractRedisScheduleIT {
  private static final int SHARDS = 3;
  private RedisCluster cluster;

  @BeforeAll
  void startCluster() {
    cluster = RedisCluster.start(3);
  }

  @AfterAll
  void stopCluster() {
    cluster.close();
  }

  @Override
  protected RedisConnections connect() {
    List<RedisProcess> nodes = cluster.nodes();
    String seeds = nodes.get(0).uri() + "," + "127.0.0.1:" + nodes.get(1).port();
    return RedisConnections.cluster(
        io.delayedtask.operator.config.RedisUris.split(seeds),
        Optional.empty(),
        RedisConnections.DEFAULT_TIMEOUT);
  }

  @Override
  protected int shards() {
    return SHARDS;
  }

  @Override
  protected void flushScripts() {
    cluster.nodes().forEach(node -> RedisCluster.on(node, redis -> redis.scriptFlush()));
  }

  @Test
  void shardsSpreadOverTheMasters() {
    Set<RedisProcess> owners = new HashSet<>();
    for (int shard = 0; shard < SHARDS; shard++) {
      int slot = SlotHash.getSlot(schedule.keys().due(shard));
      assertThat(SlotHash.getSlot(schedule.keys().inFlight(shard))).isEqualTo(slot);
      assertThat(SlotHash.getSlot(schedule.keys().claimed(shard))).isEqualTo(slot);
      assertThat(SlotHash.getSlot(schedule.keys().tokens(shard))).isEqualTo(slot);
      assertThat(SlotHash.getSlot(schedule.keys().claimSequence(shard))).isEqualTo(slot);
      owners.add(cluster.ownerOf(schedule.keys().due(shard)));
    }
    assertThat(owners).hasSize(3);
    assertThat(schedule.serverIdentity().split(",")).hasSize(3);
  }
}
