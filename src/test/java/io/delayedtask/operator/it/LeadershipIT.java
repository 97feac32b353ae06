package io.delayedtask.operator.it;

import static io.delayedtask.operator.testing.Tasks.busyboxJob;
import static io.delayedtask.operator.testing.Tasks.create;
import static io.delayedtask.operator.testing.Tasks.phase;
import static io.delayedtask.operator.testing.Tasks.task;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.delayedtask.operator.DelayedTaskOperator;
import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.Phase;
import io.delayedtask.operator.config.OperatorConfig;
import io.delayedtask.operator.testing.Events;
import io.delayedtask.operator.testing.FiringInvariants;
import io.delayedtask.operator.testing.FiringLedger;
import io.delayedtask.operator.testing.OperatorFixture;
import io.delayedtask.operator.testing.RealKubernetes;
import io.delayedtask.operator.testing.RedisProcess;
import io.delayedtask.operator.testing.RequiresRealKubernetes;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Two operator instances share one Lease and one Redis: one fires, each task fires exactly once,
 * and the standby takes over when the leader stops. On a real kube-apiserver: the Lease is a real
 * coordination.k8s.io/v1 object whose updates meet the resourceVersion check, and a second creation
 * of a task's Job meets the server's own AlreadyExists.
 */
@RequiresRealKubernetes
class LeadershipIT {
  private static final Duration TIMEOUT = Duration.ofSeconds(30);
  private static final Set<Phase> FIRED = Set.of(Phase.Fired, Phase.Running);
  private static final String LEASE = "delayed-task-operator";

  private String ns; // a namespace of its own on the shared server, per test
  private RedisProcess redis;
  private RealKubernetes kube;
  private KubernetesClient client;
  private FiringLedger ledger;
  private final List<KubernetesClient> operatorClients = new ArrayList<>();
  private DelayedTaskOperator first;
  private DelayedTaskOperator second;

  @BeforeEach
  void start() {
    redis = RedisProcess.start();
    kube = RealKubernetes.shared();
    client = kube.client();
    ns = kube.createNamespace("leadership");
    ledger = new FiringLedger(client, ns);
    first = startInstance("replica-a");
    second = startInstance("replica-b");
  }

  private DelayedTaskOperator startInstance(String identity) {
    KubernetesClient own = kube.newClient();
    operatorClients.add(own);
    Map<String, String> env = OperatorFixture.env(redis, "shared", identity);
    env.put(OperatorConfig.NAMESPACES, ns);
    env.put(OperatorConfig.LEASE_NAMESPACE, ns);
    env.put(OperatorConfig.LEASE_NAME, LEASE);
    return OperatorFixture.start(env, own);
  }

  @AfterEach
  void stop() {
    for (DelayedTaskOperator operator : new DelayedTaskOperator[] {first, second}) {
      if (operator != null) {
        operator.close();
      }
    }
    operatorClients.forEach(KubernetesClient::close);
    if (ledger != null) {
      ledger.close();
    }
    redis.close();
  }

  @Test
  void eachTaskFiresExactlyOnceAndTheStandbyTakesOver() {
    await().atMost(TIMEOUT).until(() -> first.isFiring() || second.isFiring());
    await()
        .during(Duration.ofSeconds(1))
        .atMost(Duration.ofSeconds(5))
        .until(() -> first.isFiring() ^ second.isFiring());
    DelayedTaskOperator leader = first.isFiring() ? first : second;
    DelayedTaskOperator standby = leader == first ? second : first;
    String standbyIdentity = leader == first ? "replica-b" : "replica-a";
    assertThat(leaseHolder())
        .as("the real Lease names the leader")
        .isEqualTo(leader == first ? "replica-a" : "replica-b");

    List<String> names = new ArrayList<>();
    Instant base = Instant.now().plusSeconds(1);
    for (int i = 0; i < 20; i++) {
      int n = i;
      String name = "task-" + i;
      names.add(name);
      create(
          client,
          task(
              ns,
              name,
              s -> {
                s.setRunAt(base.plusMillis(100L * n).toString());
                if (n % 2 == 0) {
                  s.setJobTemplate(busyboxJob());
                }
              }));
    }
    names.forEach(
        name ->
            await(name)
                .atMost(TIMEOUT)
                .until(() -> phase(client, ns, name).map(FIRED::contains).orElse(false)));

    // Scheduled by the leader, due well after it stops: the standby must fire these.
    List<String> handedOver = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      String name = "later-" + i;
      handedOver.add(name);
      create(client, task(ns, name, s -> s.setDelay("8s")));
    }
    handedOver.forEach(
        name ->
            await(name)
                .atMost(TIMEOUT)
                .until(() -> phase(client, ns, name).orElse(null) == Phase.Scheduled));
    leader.close();
    Instant leaderStopped = Instant.now();
    await("standby takes over").atMost(TIMEOUT).until(standby::isFiring);
    assertThat(leaseHolder()).as("the Lease after the hand-over").isEqualTo(standbyIdentity);

    handedOver.forEach(
        name ->
            await(name)
                .atMost(TIMEOUT)
                .until(() -> phase(client, ns, name).orElse(null) == Phase.Fired));
    // Fired after the old leader had stopped: by the standby, the only one left.
    assertThat(handedOver)
        .allSatisfy(
            name ->
                assertThat(
                        Instant.parse(
                            io.delayedtask.operator.testing.Tasks.get(client, ns, name)
                                .getStatus()
                                .getFiredTime()))
                    .as("firedTime of %s; the old leader stopped at %s", name, leaderStopped)
                    .isAfter(leaderStopped));
    create(client, task(ns, "after-failover", s -> s.setDelay("500ms")));
    await()
        .atMost(TIMEOUT)
        .until(() -> phase(client, ns, "after-failover").orElse(null) == Phase.Fired);

    // Exactly once, by the task's Events (their counts summed): one firing each.
    List<String> all = new ArrayList<>(names);
    all.addAll(handedOver);
    all.add("after-failover");
    for (String name : all) {
      DelayedTask task = io.delayedtask.operator.testing.Tasks.get(client, ns, name);
      int firings =
          Events.count(client, ns, name, "Fired") + Events.count(client, ns, name, "JobCreated");
      assertThat(firings).as("firings of %s", name).isEqualTo(1);
      assertThat(task.getStatus().getPhase())
          .isEqualTo(task.getSpec().getJobTemplate() != null ? Phase.Running : Phase.Fired);
    }
    assertThat(client.batch().v1().jobs().inNamespace(ns).list().getItems())
        .extracting(Job::getMetadata)
        .hasSize(10);
    assertThat(client.v1().events().inNamespace(ns).list().getItems())
        .extracting(Event::getReason)
        .doesNotContain("Failed", "Missed");
    // And as the test's own watches saw it: one firedTime per task, one Job per template (created
    // once), none early.
    FiringInvariants.assertFiredOnceNotEarly(client, ns, all, ledger, null);
  }

  private String leaseHolder() {
    Lease lease = client.leases().inNamespace(ns).withName(LEASE).get();
    return lease == null ? null : lease.getSpec().getHolderIdentity();
  }
}
