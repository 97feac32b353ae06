package io.delayedtask.operator.schedule;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.delayedtask.operator.testing.RedisProcess;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.SlotHash;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The schedule suite against a 3-master Redis Cluster started here (slots split in three, no
 * replicas), with 3 shards, which land on different masters.
 */
class ClusterRedisScheduleIT extends AbstractRedisScheduleIT {
  private static final int SHARDS = 3;
  private final List<RedisProcess> nodes = new ArrayList<>();

  @BeforeAll
  void startCluster() {
    for (int i = 0; i < 3; i++) {
      nodes.add(RedisProcess.startClusterNode());
    }
    int slotsPerNode = SlotHash.SLOT_COUNT / nodes.size();
    for (int i = 0; i < nodes.size(); i++) {
      int from = i * slotsPerNode;
      int to = i == nodes.size() - 1 ? SlotHash.SLOT_COUNT : from + slotsPerNode;
      int[] slots = IntStream.range(from, to).toArray();
      withNode(nodes.get(i), node -> node.sync().clusterAddSlots(slots));
    }
    for (RedisProcess other : nodes.subList(1, nodes.size())) {
      withNode(nodes.get(0), node -> node.sync().clusterMeet("127.0.0.1", other.port()));
    }
    await("cluster_state:ok on every node").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100))
        .until(() -> nodes.stream().allMatch(process -> {
          String[] info = new String[1];
          withNode(process, node -> info[0] = node.sync().clusterInfo());
          return info[0].contains("cluster_state:ok") && info[0].contains("cluster_known_nodes:3");
        }));
  }

  @AfterAll
  void stopCluster() {
    nodes.forEach(RedisProcess::close);
  }

  @Override
  protected RedisConnections connect() {
    String seeds = nodes.get(0).uri() + "," + "127.0.0.1:" + nodes.get(1).port();
    return RedisConnections.cluster(io.delayedtask.operator.config.RedisUris.split(seeds), Optional.empty(),
        RedisConnections.DEFAULT_TIMEOUT);
  }

  @Override
  protected int shards() {
    return SHARDS;
  }

  @Override
  protected void flushScripts() {
    nodes.forEach(process -> withNode(process, node -> node.sync().scriptFlush()));
  }

  @Test
  void shardsSpreadOverTheMasters() {
    int slotsPerNode = SlotHash.SLOT_COUNT / nodes.size();
    Set<Integer> owners = new HashSet<>();
    for (int shard = 0; shard < SHARDS; shard++) {
      int slot = SlotHash.getSlot(schedule.keys().due(shard));
      assertThat(SlotHash.getSlot(schedule.keys().inFlight(shard))).isEqualTo(slot);
      assertThat(SlotHash.getSlot(schedule.keys().claimed(shard))).isEqualTo(slot);
      owners.add(Math.min(slot / slotsPerNode, nodes.size() - 1));
    }
    assertThat(owners).hasSize(3);
    assertThat(schedule.serverIdentity().split(",")).hasSize(3);
  }

  private static void withNode(RedisProcess process,
      java.util.function.Consumer<StatefulRedisConnection<String, String>> action) {
    RedisClient client = RedisClient.create(process.uri());
    try (StatefulRedisConnection<String, String> connection = client.connect()) {
      action.accept(connection);
    } finally {
      client.shutdown(0, 1, java.util.concurrent.TimeUnit.SECONDS);
    }
  }
}
