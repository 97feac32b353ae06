package io.delayedtask.operator.testing;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.cluster.SlotHash;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.awaitility.Awaitility;

/**
 * A Redis Cluster of masters only, started by a test: the 16384 slots split in equal ranges (node i
 * owns the i-th), every node met, cluster_state:ok on each before {@link #start} returns.
 */
public final class RedisCluster implements AutoCloseable {
  private final List<RedisProcess> nodes;

  private RedisCluster(List<RedisProcess> nodes) {
    this.nodes = List.copyOf(nodes);
  }

  /** {@code masters} nodes, each started with {@code extraArgs} after the cluster options. */
  public static RedisCluster start(int masters, String... extraArgs) {
    List<RedisProcess> started = new ArrayList<>();
    try {
      for (int i = 0; i < masters; i++) {
        started.add(RedisProcess.startClusterNode(extraArgs));
      }
      RedisCluster cluster = new RedisCluster(started);
      cluster.assignSlotsAndMeet();
      return cluster;
    } catch (RuntimeException e) {
      started.forEach(RedisProcess::close);
      throw e;
    }
  }

  private void assignSlotsAndMeet() {
    for (int i = 0; i < nodes.size(); i++) {
      int[] slots = IntStream.range(firstSlot(i), firstSlot(i + 1)).toArray();
      on(nodes.get(i), redis -> redis.clusterAddSlots(slots));
    }
    for (RedisProcess other : nodes.subList(1, nodes.size())) {
      on(nodes.get(0), redis -> redis.clusterMeet("127.0.0.1", other.port()));
    }
    Awaitility.await("cluster_state:ok on every node")
        .atMost(Duration.ofSeconds(30))
        .pollInterval(Duration.ofMillis(100))
        .until(
            () ->
                nodes.stream()
                    .allMatch(
                        node -> {
                          String info = on(node, RedisCommands::clusterInfo);
                          return info.contains("cluster_state:ok")
                              && info.contains("cluster_known_nodes:" + nodes.size());
                        }));
  }

  private int firstSlot(int node) {
    return node == nodes.size() ? SlotHash.SLOT_COUNT : node * (SlotHash.SLOT_COUNT / nodes.size());
  }

  public List<RedisProcess> nodes() {
    return nodes;
  }

  /** The node whose slot range holds {@code key}'s slot. */
  public RedisProcess ownerOf(String key) {
    int slot = SlotHash.getSlot(key);
    for (int i = 0; i < nodes.size(); i++) {
      if (slot >= firstSlot(i) && slot < firstSlot(i + 1)) {
        return nodes.get(i);
      }
    }
    throw new IllegalStateException("slot " + slot + " is owned by no node");
  }

  /** Every node's URI, comma-separated: DELAYEDTASK_REDIS_URI for cluster seeds. */
  public String seeds() {
    return nodes.stream().map(RedisProcess::uri).collect(Collectors.joining(","));
  }

  /** Runs {@code action} on a fresh plain (not cluster-aware) connection to one node. */
  public static <T> T on(RedisProcess node, Function<RedisCommands<String, String>, T> action) {
    RedisClient client = RedisClient.create(node.uri());
    try (StatefulRedisConnection<String, String> connection = client.connect()) {
      return action.apply(connection.sync());
    } finally {
      client.shutdown(0, 1, TimeUnit.SECONDS);
    }
  }

  @Override
  public void close() {
    nodes.forEach(RedisProcess::close);
  }
}
