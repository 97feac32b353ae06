package io.delayedtask.operator.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.delayedtask.operator.DelayedTaskOperator;
import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.Phase;
import io.delayedtask.operator.config.OperatorConfig;
import io.delayedtask.operator.leader.ScheduleIds;
import io.delayedtask.operator.schedule.RedisSchedule;
import io.delayedtask.operator.schedule.ScheduleKeys;
import io.delayedtask.operator.testing.FiringInvariants;
import io.delayedtask.operator.testing.FiringLedger;
import io.delayedtask.operator.testing.OperatorFixture;
import io.delayedtask.operator.testing.RealKubernetes;
import io.delayedtask.operator.testing.RedisProcess;
import io.delayedtask.operator.testing.RequiresRealKubernetes;
import io.delayedtask.operator.testing.SentinelProcess;
import io.delayedtask.operator.testing.Tasks;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.lettuce.core.KillArgs;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScoredValue;
import io.lettuce.core.TransactionResult;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Sentinel failover that loses writes. Redis replicates asynchronously, so the replica that is
 * promoted may lack the newest schedule writes: here it lacks the entries of tasks created just
 * before the master died, an acknowledgement (of a task that fired on the old master) and a move to
 * a later due time. The operator must notice the new server (its run_id) and rebuild the schedule
 * from the DelayedTasks; the periodic resync is 300 s, so nothing else can heal it within the test.
 * Every task must still fire, once, never early.
 */
@RequiresRealKubernetes
class RedisFailoverIT {
  private static final Logger LOG = LoggerFactory.getLogger(RedisFailoverIT.class);

  /** A namespace of its own on the shared real API server. */
  private static String ns;

  private static final String MASTER_NAME = "tasks";
  private static final String KEY_PREFIX = "failover";
  private static final ScheduleKeys KEYS =
      new ScheduleKeys(KEY_PREFIX, RedisSchedule.DEFAULT_SHARDS);
  private static final Duration TIMEOUT = Duration.ofSeconds(20);
  private static RealKubernetes kube;

  @BeforeAll
  static void namespace() {
    kube = RealKubernetes.shared();
    ns = kube.createNamespace("failover");
  }

  @Test
  void everyTaskFiresOnceAndNotEarlyAfterAFailoverThatLostTheNewestWrites() {
    try (KubernetesClient operatorClient = kube.newClient();
        FiringLedger ledger = new FiringLedger(kube.client(), ns);
        RedisClient direct = RedisClient.create();
        RedisProcess master = RedisProcess.start();
        RedisProcess replica = startReplicaOf(master, direct);
        // Started once the replica is attached, so its first INFO of the master already names it.
        SentinelProcess sentinel =
            SentinelProcess.monitor(
                MASTER_NAME, master, Duration.ofSeconds(1), Duration.ofSeconds(2))) {
      try {
        await("the sentinel knows the replica")
            .atMost(TIMEOUT)
            .until(
                () ->
                    sentinel.replicas().stream()
                        .anyMatch(
                            known -> Integer.toString(replica.port()).equals(known.get("port"))));
        Map<String, String> env = OperatorFixture.env(master, KEY_PREFIX, "op");
        env.put(OperatorConfig.REDIS_URI, sentinel.uri());
        env.put(OperatorConfig.NAMESPACES, ns);
        env.put(OperatorConfig.LEASE_NAMESPACE, ns);
        // Only the reaction to the new run_id can heal the schedule within this test.
        env.put(OperatorConfig.RESYNC_SECONDS, "300");
        try (DelayedTaskOperator operator = OperatorFixture.start(env, operatorClient)) {
          failOverLosingTheNewestWrites(ledger, direct, master, replica, sentinel);
        }
      } finally {
        // A failed assertion may come while the replica is stopped: never leave a frozen process
        // behind.
        if (replica.isAlive()) {
          replica.signal("CONT");
        }
      }
    }
  }

  private void failOverLosingTheNewestWrites(
      FiringLedger ledger,
      RedisClient direct,
      RedisProcess master,
      RedisProcess replica,
      SentinelProcess sentinel) {
    KubernetesClient client = kube.client();
    Map<String, String> ids = new LinkedHashMap<>();

    // 1. Tasks whose entries reach the replica. One falls due while the replica is frozen (its
    //    acknowledgement will be lost), one will be moved later while it is frozen (the move is
    // lost).
    Instant start = Instant.now();
    Instant earlyDue = start.plusSeconds(10);
    for (int i = 0; i < 3; i++) {
      create(client, ids, Tasks.statusOnly(ns, "early-" + i, earlyDue.plusMillis(100L * i)));
    }
    create(client, ids, Tasks.withJob(ns, "early-job", earlyDue));
    create(client, ids, Tasks.withJob(ns, "fired-before-failover", start.plusSeconds(3)));
    create(client, ids, Tasks.statusOnly(ns, "moved-later", earlyDue));
    awaitScheduled(client, ids.keySet());
    await("the replica has every entry")
        .atMost(TIMEOUT)
        .until(() -> dueEntries(direct, replica).keySet().containsAll(ids.values()));

    // 2. Freeze the replica, then cut its replication link: a stopped process's kernel still
    //    receives the replication stream into its socket buffer and would apply it on waking.
    replica.signal("STOP");
    try (StatefulRedisConnection<String, String> connection = connect(direct, master)) {
      assertThat(connection.sync().clientKill(KillArgs.Builder.typeSlave())).isEqualTo(1L);
    }
    assertThat(phase(client, "fired-before-failover"))
        .as("the setup was too slow: it fired before the freeze")
        .isEqualTo(Phase.Scheduled);

    // 3. Writes only the master gets: new tasks, a move to a later due time, an acknowledgement.
    Instant lateDue = Instant.now().plusSeconds(8);
    List<String> late = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      late.add(
          create(client, ids, Tasks.statusOnly(ns, "late-" + i, lateDue.plusMillis(100L * i))));
    }
    late.add(create(client, ids, Tasks.withJob(ns, "late-job", lateDue)));
    Instant movedDue = earlyDue.plusSeconds(3);
    Tasks.editSpec(client, ns, "moved-later", spec -> spec.setRunAt(Tasks.rfc3339(movedDue)));
    awaitScheduled(client, ids.keySet());
    await("moved-later is rescheduled")
        .atMost(TIMEOUT)
        .until(() -> movedDue.toEpochMilli() == epochMilli(dueTimeOf(client, "moved-later")));
    Map<String, Long> onMaster = dueEntries(direct, master);
    assertThat(onMaster)
        .as("the master's due entries")
        .containsKeys(late.stream().map(ids::get).toArray(String[]::new))
        .containsEntry(ids.get("moved-later"), movedDue.toEpochMilli());
    await("fired-before-failover fired and was acknowledged on the master")
        .atMost(TIMEOUT)
        .until(
            () ->
                FiringInvariants.notFiredYet(client, ns, List.of("fired-before-failover")).isEmpty()
                    && !dueEntries(direct, master).containsKey(ids.get("fired-before-failover"))
                    && !members(direct, master, KEYS.inFlight(0))
                        .contains(ids.get("fired-before-failover")));
    assertThat(FiringInvariants.notFiredYet(client, ns, late))
        .as("the setup was too slow: late tasks fired on the master")
        .containsExactlyElementsOf(late);

    // 4. The master dies; the replica wakes without those writes and the sentinel promotes it.
    master.kill();
    Instant masterKilled = Instant.now();
    replica.signal("CONT");
    ReplicaView woken = view(direct, replica);
    assertThat(woken.role())
        .as("the replica must still be a replica when it is read")
        .isEqualTo("slave");
    assertThat(woken.due())
        .as("what the replica lost")
        .doesNotContainKeys(late.stream().map(ids::get).toArray(String[]::new))
        .containsEntry(ids.get("moved-later"), earlyDue.toEpochMilli())
        .containsKey(ids.get("fired-before-failover"));
    try {
      await("the sentinel promotes the replica")
          .atMost(TIMEOUT)
          .until(sentinel::masterPort, port -> port == replica.port());
    } catch (ConditionTimeoutException e) {
      throw new AssertionError("no failover; the sentinel's log:\n" + sentinel.log(), e);
    }
    LOG.info(
        "Failover done {} ms after the master was killed",
        Duration.between(masterKilled, Instant.now()).toMillis());

    // 5. Every task fires, once, not early.
    List<String> names = List.copyOf(ids.keySet());
    await("every task fired")
        .atMost(TIMEOUT)
        .pollInterval(Duration.ofMillis(200))
        .until(() -> FiringInvariants.notFiredYet(client, ns, names), List::isEmpty);
    FiringInvariants.assertFiredOnceNotEarly(client, ns, names, ledger, null);
  }

  /** What a replica holds, read in one transaction together with its role. */
  private record ReplicaView(String role, Map<String, Long> due) {}

  private static ReplicaView view(RedisClient direct, RedisProcess replica) {
    try (StatefulRedisConnection<String, String> connection = connect(direct, replica)) {
      RedisCommands<String, String> redis = connection.sync();
      redis.multi();
      redis.info("replication");
      redis.zrangeWithScores(KEYS.due(0), 0, -1);
      TransactionResult result = redis.exec();
      String info = result.get(0);
      String role =
          info.lines()
              .filter(line -> line.startsWith("role:"))
              .map(line -> line.substring(5).trim())
              .findFirst()
              .orElseThrow();
      List<ScoredValue<String>> due = result.get(1);
      return new ReplicaView(role, byMember(due));
    }
  }

  private static RedisProcess startReplicaOf(RedisProcess master, RedisClient direct) {
    RedisProcess replica =
        RedisProcess.start("--replicaof", "127.0.0.1", Integer.toString(master.port()));
    try {
      await("the replica is in sync")
          .atMost(TIMEOUT)
          .until(
              () -> {
                try (StatefulRedisConnection<String, String> connection =
                    connect(direct, replica)) {
                  return connection.sync().info("replication").contains("master_link_status:up");
                }
              });
      return replica;
    } catch (RuntimeException e) {
      replica.close();
      throw e;
    }
  }

  private static String create(KubernetesClient client, Map<String, String> ids, DelayedTask task) {
    DelayedTask created = Tasks.create(client, task);
    ids.put(created.getMetadata().getName(), ScheduleIds.idOf(created));
    return created.getMetadata().getName();
  }

  private static void awaitScheduled(KubernetesClient client, Collection<String> names) {
    await("every task has a due time")
        .atMost(TIMEOUT)
        .pollInterval(Duration.ofMillis(100))
        .until(() -> names.stream().allMatch(name -> dueTimeOf(client, name) != null));
  }

  private static String dueTimeOf(KubernetesClient client, String name) {
    DelayedTask task = Tasks.get(client, ns, name);
    return task == null || task.getStatus() == null ? null : task.getStatus().getDueTime();
  }

  private static long epochMilli(String time) {
    return time == null ? Long.MIN_VALUE : Instant.parse(time).toEpochMilli();
  }

  private static Phase phase(KubernetesClient client, String name) {
    return Tasks.phase(client, ns, name).orElse(null);
  }

  /** The waiting entries on one server: id and due time in ms. */
  private static Map<String, Long> dueEntries(RedisClient direct, RedisProcess server) {
    try (StatefulRedisConnection<String, String> connection = connect(direct, server)) {
      return byMember(connection.sync().zrangeWithScores(KEYS.due(0), 0, -1));
    }
  }

  private static List<String> members(RedisClient direct, RedisProcess server, String key) {
    try (StatefulRedisConnection<String, String> connection = connect(direct, server)) {
      return connection.sync().zrange(key, 0, -1);
    }
  }

  private static Map<String, Long> byMember(List<ScoredValue<String>> entries) {
    return entries.stream()
        .collect(Collectors.toMap(ScoredValue::getValue, entry -> (long) entry.getScore()));
  }

  private static StatefulRedisConnection<String, String> connect(
      RedisClient direct, RedisProcess server) {
    return direct.connect(RedisURI.create(server.uri()));
  }
}
