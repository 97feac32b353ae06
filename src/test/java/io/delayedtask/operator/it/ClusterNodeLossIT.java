package io.delayedtask.operator.it;

import static io.delayedtask.operator.testing.Tasks.create;
import static io.delayedtask.operator.testing.Tasks.statusOnly;
import static io.delayedtask.operator.testing.Tasks.withJob;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.delayedtask.operator.DelayedTaskOperator;
import io.delayedtask.operator.config.OperatorConfig;
import io.delayedtask.operator.leader.ScheduleIds;
import io.delayedtask.operator.schedule.ScheduleKeys;
import io.delayedtask.operator.testing.FiringInvariants;
import io.delayedtask.operator.testing.FiringLedger;
import io.delayedtask.operator.testing.OperatorFixture;
import io.delayedtask.operator.testing.RealKubernetes;
import io.delayedtask.operator.testing.RedisCluster;
import io.delayedtask.operator.testing.RedisProcess;
import io.delayedtask.operator.testing.RequiresRealKubernetes;
import io.delayedtask.operator.testing.Tasks;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * One master of a 3-master Redis Cluster (no replicas) is SIGKILLed while tasks fall due, and comes
 * back empty: same port, same nodes.conf (so the same node id and slots), no data. The schedule has
 * 3 shards, one per master.
 *
 * <p>While the master is down, tasks on the two other shards fire on time, those created during the
 * outage too; when it is back, the operator sees a new run_id among the masters and rebuilds the
 * lost shard's entries from the DelayedTasks, so its tasks fire, late but once. The periodic resync
 * is 300 s away, so it is not what heals. Every task fires once, never early.
 */
@RequiresRealKubernetes
class ClusterNodeLossIT {
  /** A namespace of its own on the shared real API server. */
  private static String ns;

  private static final String PREFIX = "clusterloss";
  private static final int SHARDS = 3;
  private static final int LOST_SHARD = 1;

  /**
   * The tasks planted before the kill are due this long after each one's creation: the lost shard's
   * must still wait when the master dies, which takes a few calls after the last one is created
   * (not the whole planting, however slow the machine).
   */
  private static final Duration EARLY = Duration.ofSeconds(10);

  /** Tasks due this long after their creation: on an idle machine, after the master is back. */
  private static final Duration LATE = Duration.ofSeconds(16);

  /** Only waits: room for a machine ten times slower than an idle one. */
  private static final Duration TIMEOUT = Duration.ofSeconds(60);

  private static RealKubernetes kube;

  @BeforeAll
  static void namespace() {
    kube = RealKubernetes.shared();
    ns = kube.createNamespace("clusterloss");
  }

  private final ScheduleKeys keys = new ScheduleKeys(PREFIX, SHARDS);

  private record Planted(String name, String id, int shard, Instant due) {}

  @Test
  void losingAMasterLosesNoTaskAndStopsOnlyItsShard() {
    // Without this the surviving masters refuse every command while a slot range is uncovered
    // (CLUSTERDOWN), and no shard fires until the lost master is back.
    try (RedisCluster cluster =
            RedisCluster.start(SHARDS, "--cluster-require-full-coverage", "no");
        KubernetesClient operatorClient = kube.newClient();
        FiringLedger ledger = new FiringLedger(kube.client(), ns)) {
      RedisProcess lostMaster = cluster.ownerOf(keys.due(LOST_SHARD));
      for (int shard = 0; shard < SHARDS; shard++) {
        assertThat(cluster.ownerOf(keys.due(shard)))
            .as("shard %d's master", shard)
            .isEqualTo(cluster.nodes().get(shard));
      }
      String lostNodeId = RedisCluster.on(lostMaster, redis -> redis.clusterMyId());
      String lostRunId = runId(lostMaster);

      try (DelayedTaskOperator operator = OperatorFixture.start(env(cluster), operatorClient)) {
        KubernetesClient client = kube.client();
        // The shard of a task follows from its uid, which the API server assigns: create tasks
        // until every shard has two falling due during the outage, and the lost shard one after.
        List<Planted> late =
            plant(
                client,
                "late",
                () -> Instant.now().plus(LATE),
                planted -> countsByShard(planted).getOrDefault(LOST_SHARD, 0) >= 1);
        List<Planted> before =
            plant(
                client,
                "before",
                () -> Instant.now().plus(EARLY),
                planted ->
                    countsByShard(planted).values().stream().filter(n -> n >= 2).count() == SHARDS);
        Instant firstDue = before.stream().map(Planted::due).min(Instant::compareTo).orElseThrow();
        // Read the masters directly: each entry sits on the master that owns its shard's slot.
        List<Planted> planted = new ArrayList<>(before);
        planted.addAll(late);
        await("every entry on its shard's master")
            .atMost(TIMEOUT)
            .untilAsserted(() -> assertOnTheirMasters(cluster, planted));
        long onLostMaster = RedisCluster.on(lostMaster, redis -> redis.zcard(keys.due(LOST_SHARD)));
        assertThat(onLostMaster)
            .isEqualTo(planted.stream().filter(t -> t.shard() == LOST_SHARD).count());

        lostMaster.kill();
        // The set-up's own bound, not a promise of the operator: the lost shard's tasks could fire
        // before its master died otherwise. EARLY leaves a few calls' time after the last creation.
        assertThat(Instant.now())
            .as("the master died before the first task due during the outage")
            .isBefore(firstDue);
        RedisProcess survivor = cluster.nodes().get((LOST_SHARD + 1) % SHARDS);
        await("the survivors mark the lost master failed")
            .atMost(TIMEOUT)
            .until(() -> failed(survivor, lostNodeId));
        // Tasks created during the outage: on the lost shard the reconciler cannot write the entry.
        List<Planted> during =
            plant(
                client,
                "during",
                () -> firstDue,
                created -> countsByShard(created).size() == SHARDS);
        List<Planted> early = new ArrayList<>(before);
        early.addAll(during);
        List<Planted> earlyOnLost = early.stream().filter(t -> t.shard() == LOST_SHARD).toList();
        List<Planted> earlyOnSurvivors =
            early.stream().filter(t -> t.shard() != LOST_SHARD).toList();
        await("the new entries on the surviving masters")
            .atMost(TIMEOUT)
            .untilAsserted(
                () ->
                    assertOnTheirMasters(
                        cluster, during.stream().filter(t -> t.shard() != LOST_SHARD).toList()));

        await("the surviving shards' tasks fire while the master is down")
            .atMost(TIMEOUT)
            .until(
                () -> FiringInvariants.notFiredYet(client, ns, names(earlyOnSurvivors)).isEmpty());
        Instant lastEarlyDue =
            early.stream().map(Planted::due).max(Instant::compareTo).orElseThrow();
        await("every early task overdue")
            .atMost(TIMEOUT)
            .until(() -> Instant.now().isAfter(lastEarlyDue));
        assertThat(lostMaster.isAlive()).isFalse();
        assertThat(FiringInvariants.notFiredYet(client, ns, names(earlyOnLost)))
            .as("the lost shard's entries are on the dead master")
            .containsExactlyInAnyOrderElementsOf(names(earlyOnLost));

        Instant restartedAt = Instant.now();
        lostMaster.restart();
        String restartedNodeId = RedisCluster.on(lostMaster, redis -> redis.clusterMyId());
        assertThat(restartedNodeId).as("rejoins as the same node").isEqualTo(lostNodeId);
        assertThat(runId(lostMaster)).as("a new process").isNotEqualTo(lostRunId);
        Map<String, String> persistence =
            new HashMap<>(); // Redis 6.2: one parameter per CONFIG GET
        persistence.putAll(RedisCluster.on(lostMaster, redis -> redis.configGet("save")));
        persistence.putAll(RedisCluster.on(lostMaster, redis -> redis.configGet("appendonly")));
        assertThat(persistence)
            .as("no persistence: it came back empty")
            .containsEntry("save", "")
            .containsEntry("appendonly", "no");

        List<Planted> all = new ArrayList<>(early);
        all.addAll(late);
        await("every task fires")
            .atMost(TIMEOUT)
            .until(() -> FiringInvariants.notFiredYet(client, ns, names(all)).isEmpty());
        // Drained: no entry waits or is in flight anywhere. Only each shard's claim counter
        // (claimseq, which numbers claim tokens) stays, by design.
        await("the schedule drains on every master")
            .atMost(TIMEOUT)
            .until(
                () ->
                    cluster.nodes().stream()
                        .allMatch(
                            node ->
                                RedisCluster.on(node, redis -> redis.keys("*")).stream()
                                    .allMatch(key -> key.endsWith(":claimseq"))));

        FiringInvariants.assertFiredOnceNotEarly(client, ns, names(all), ledger, null);
        Map<String, Instant> seen = firstFiredSeenByName(client, ledger, all);
        for (Planted task : earlyOnSurvivors) {
          assertThat(seen.get(task.name()))
              .as(task.name() + " fired while the master was down")
              .isBefore(restartedAt);
        }
        for (Planted task : earlyOnLost) {
          assertThat(seen.get(task.name()))
              .as(task.name() + " fired after the master came back")
              .isAfter(restartedAt);
        }
        assertThat(ledger.watchErrors()).isEmpty();
      }
    }
  }

  /**
   * Creates tasks due at {@code dueOf.get()} each (alternately with a Job and status-only) until
   * {@code enough}.
   */
  private List<Planted> plant(
      KubernetesClient client,
      String group,
      Supplier<Instant> dueOf,
      Predicate<List<Planted>> enough) {
    List<Planted> planted = new ArrayList<>();
    for (int n = 0; !enough.test(planted); n++) {
      assertThat(n).as("tasks created for group " + group).isLessThan(60);
      String name = group + "-" + n;
      Instant due = dueOf.get();
      var created = create(client, n % 2 == 0 ? withJob(ns, name, due) : statusOnly(ns, name, due));
      String id = ScheduleIds.idOf(created);
      planted.add(new Planted(name, id, keys.shardOf(id), Instant.parse(Tasks.rfc3339(due))));
    }
    return planted;
  }

  private void assertOnTheirMasters(RedisCluster cluster, List<Planted> tasks) {
    for (Planted task : tasks) {
      Double score =
          RedisCluster.on(
              cluster.ownerOf(keys.due(task.shard())),
              redis -> redis.zscore(keys.due(task.shard()), task.id()));
      assertThat(score)
          .as(task.name() + " on its master")
          .isEqualTo((double) task.due().toEpochMilli());
    }
  }

  private static Map<Integer, Integer> countsByShard(List<Planted> planted) {
    Map<Integer, Integer> counts = new HashMap<>();
    planted.forEach(task -> counts.merge(task.shard(), 1, Integer::sum));
    return counts;
  }

  private static List<String> names(List<Planted> tasks) {
    return tasks.stream().map(Planted::name).toList();
  }

  private static Map<String, Instant> firstFiredSeenByName(
      KubernetesClient client, FiringLedger ledger, List<Planted> tasks) {
    Map<String, Instant> seenByUid = ledger.firstFiredSeenAt();
    Map<String, Instant> seen = new HashMap<>();
    for (Planted task : tasks) {
      String uid = Tasks.get(client, ns, task.name()).getMetadata().getUid();
      seen.put(task.name(), seenByUid.get(uid));
    }
    return seen;
  }

  /** The node {@code nodeId} is flagged "fail" (not just "fail?") in {@code observer}'s view. */
  private static boolean failed(RedisProcess observer, String nodeId) {
    String nodes = RedisCluster.on(observer, redis -> redis.clusterNodes());
    return nodes
        .lines()
        .filter(line -> line.startsWith(nodeId + " "))
        .anyMatch(
            line -> {
              String flags = line.split(" ")[2];
              return List.of(flags.split(",")).contains("fail");
            });
  }

  private static String runId(RedisProcess node) {
    String info = RedisCluster.on(node, redis -> redis.info("server"));
    return info.lines().filter(line -> line.startsWith("run_id:")).findFirst().orElseThrow();
  }

  private static Map<String, String> env(RedisCluster cluster) {
    Map<String, String> env = new HashMap<>();
    env.put(OperatorConfig.REDIS_URI, cluster.seeds());
    env.put(OperatorConfig.REDIS_CLUSTER, "true");
    env.put(OperatorConfig.REDIS_SHARDS, Integer.toString(SHARDS));
    env.put(OperatorConfig.KEY_PREFIX, PREFIX);
    env.put(OperatorConfig.IDENTITY, "op");
    env.put(OperatorConfig.LEADER_ELECTION, "false");
    env.put(OperatorConfig.NAMESPACES, ns);
    env.put(OperatorConfig.HTTP_PORT, "0");
    // Resync only every 5 minutes: what heals the lost shard here is noticing the new run_id.
    env.put(OperatorConfig.RESYNC_SECONDS, "300");
    return env;
  }
}
