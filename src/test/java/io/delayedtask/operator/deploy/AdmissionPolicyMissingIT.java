package io.delayedtask.operator.deploy;

import static io.delayedtask.operator.testing.Tasks.create;
import static io.delayedtask.operator.testing.Tasks.get;
import static io.delayedtask.operator.testing.Tasks.phase;
import static io.delayedtask.operator.testing.Tasks.rfc3339;
import static io.delayedtask.operator.testing.Tasks.statusOnly;
import static io.delayedtask.operator.testing.Tasks.withJob;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.delayedtask.operator.api.v1alpha1.Condition;
import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.Destination;
import io.delayedtask.operator.api.v1alpha1.Phase;
import io.delayedtask.operator.api.v1alpha1.ServiceReference;
import io.delayedtask.operator.config.OperatorConfig;
import io.delayedtask.operator.config.SinkConfig;
import io.delayedtask.operator.reconcile.AdmissionPolicies;
import io.delayedtask.operator.task.job.TaskLabels;
import io.delayedtask.operator.testing.Events;
import io.delayedtask.operator.testing.OperatorFixture;
import io.delayedtask.operator.testing.OperatorHttp;
import io.delayedtask.operator.testing.RealKubernetes;
import io.delayedtask.operator.testing.Receiver;
import io.delayedtask.operator.testing.RequiresRealKubernetes;
import io.delayedtask.operator.testing.Tasks;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The operator fails closed without the admission policy, on a real API server: with the shipped
 * policies (k8s/15-admission-policy.yaml) deleted, a due task with a jobTemplate creates no Job and
 * one with a sink.audience sends nothing (so no token); both stay Scheduled with Ready=False
 * AdmissionPolicyMissing, a Warning Event and delayedtask_admission_policy_present 0, while a
 * status-only task fires and one past its startingDeadlineSeconds is Missed. Once the policies are
 * applied again, they stay NotAdmitted (their specs were never checked) while a task written before
 * the gap fires; written again, the Job task fires. A binding that only warns, a policy that fails
 * open or whose rules changed counts as missing, whatever its name.
 *
 * <p>A server of its own: the policies are cluster-wide, and deleting them must not touch other
 * tests. The operator runs in-process as the admin (system:masters, which the status policy
 * admits), with the check on for the plain manifests' bindings, and without leader election.
 */
@RequiresRealKubernetes
class AdmissionPolicyMissingIT {
  private static final Path POLICY = Manifests.PLAIN.resolve("15-admission-policy.yaml");
  private static final String PRESENT = "delayedtask_admission_policy_present";
  private static final Duration RETURN_BOUND = Duration.ofSeconds(30);

  private static RealKubernetes kube;
  private static KubernetesClient client;
  private static Receiver receiver;
  private static OperatorFixture.OnRealKubernetes world;
  private static String ns;

  @BeforeAll
  static void start() {
    kube = RealKubernetes.startDedicated();
    client = kube.client();
    apply(POLICY);
    receiver = Receiver.start();
    // One instance, without leader election: a lease lost on a busy machine is not this test's
    // subject.
    world =
        OperatorFixture.startOnRealKubernetes(
            kube,
            "admission",
            Map.of(
                OperatorConfig.LEADER_ELECTION,
                "false",
                OperatorConfig.ADMISSION_POLICY,
                String.join(",", OperatorConfig.DEFAULT_ADMISSION_POLICY_BINDINGS),
                SinkConfig.ALLOWED_URIS,
                "http://localhost:" + receiver.port() + ",http://127.0.0.1:" + receiver.port()));
    ns = world.namespace();
    // The sink: the sender ServiceAccount, and a Service naming this host's receiver.
    client
        .serviceAccounts()
        .inNamespace(ns)
        .resource(
            new ServiceAccountBuilder()
                .withNewMetadata()
                .withName(SinkConfig.defaults().serviceAccount())
                .endMetadata()
                .build())
        .create();
    client
        .services()
        .inNamespace(ns)
        .resource(
            new ServiceBuilder()
                .withNewMetadata()
                .withName("orders")
                .endMetadata()
                .withNewSpec()
                .withType("ExternalName")
                .withExternalName("localhost")
                .addNewPort()
                .withName("http")
                .withPort(receiver.port())
                .endPort()
                .endSpec()
                .build())
        .create();
  }

  @AfterAll
  static void stop() {
    if (world != null) {
      world.close();
    }
    if (receiver != null) {
      receiver.close();
    }
    if (kube != null) {
      kube.close();
    }
  }

  @Test
  void
      withThePolicyDeletedJobAndTokenTasksWaitWhileAStatusOnlyTaskFiresAndTheyFireWithin30sOfItsReturn() {
    int port = world.operator().httpPort();
    await("the policy is seen in place")
        .atMost(Duration.ofSeconds(30))
        .until(() -> OperatorHttp.metric(port, PRESENT, "") == 1.0);

    // Written while the policy is in force, due after its return: it fires then (its record, in
    // status.admission, outlives the policy's re-creation).
    // The policy's current objects must predate the task (by AdmissionPolicies.GRACE, in whole
    // seconds: the other test of this class edits them).
    await().pollDelay(AdmissionPolicies.GRACE.plusSeconds(1)).until(() -> true);
    create(client, withJob(ns, "before", Instant.now().plusSeconds(40)));
    await("the task written before the gap is recorded as admitted")
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                Optional.ofNullable(get(client, ns, "before").getStatus())
                    .map(st -> st.getAdmission())
                    .isPresent());

    RealKubernetes.Kubectl.Result deleted = kube.kubectl("delete", "-f", POLICY.toString());
    assertThat(deleted.ok()).as(deleted.output()).isTrue();
    await("the operator sees it gone")
        .atMost(Duration.ofSeconds(30))
        .until(() -> OperatorHttp.metric(port, PRESENT, "") == 0.0);

    Instant now = Instant.now();
    create(client, withJob(ns, "job", now));
    create(client, withAudience("token", now));
    create(client, statusOnly(ns, "status-only", now));
    DelayedTask late = withJob(ns, "deadline", now);
    late.getSpec().setStartingDeadlineSeconds(3L);
    create(client, late);

    await("a status-only task fires as usual")
        .atMost(Duration.ofSeconds(30))
        .until(() -> phase(client, ns, "status-only").orElse(null) == Phase.Fired);
    for (String name : new String[] {"job", "token"}) {
      await(name + " waits, not ready, saying why")
          .atMost(Duration.ofSeconds(30))
          .untilAsserted(
              () -> {
                DelayedTask task = get(client, ns, name);
                assertThat(task.getStatus().getPhase()).isEqualTo(Phase.Scheduled);
                Condition ready =
                    task.getStatus().getConditions().stream()
                        .filter(c -> Condition.READY.equals(c.getType()))
                        .findFirst()
                        .orElseThrow();
                assertThat(ready.getStatus()).isEqualTo("False");
                assertThat(ready.getReason()).isEqualTo("AdmissionPolicyMissing");
                assertThat(ready.getMessage())
                    .contains(
                        "delayed-task-operator-author-rights is missing",
                        "kubectl apply -f k8s/15-admission-policy.yaml");
                assertThat(Events.count(client, ns, name, "AdmissionPolicyMissing"))
                    .isGreaterThanOrEqualTo(1);
              });
    }
    assertThat(Events.count(client, ns, "job", "AdmissionPolicyMissing")).isEqualTo(1);
    // Through at least one recheck: still no Job, and nothing reached the receiver (so no token).
    await("nothing is created or sent while the policy is missing")
        .during(Duration.ofSeconds(12))
        .atMost(Duration.ofSeconds(20))
        .until(
            () ->
                jobsOf("job") == 0
                    && receiver.requests().isEmpty()
                    && phase(client, ns, "job").orElse(null) == Phase.Scheduled);
    await("its startingDeadlineSeconds still counts")
        .atMost(Duration.ofSeconds(30))
        .until(() -> phase(client, ns, "deadline").orElse(null) == Phase.Missed);
    assertThat(jobsOf("deadline")).isZero();

    apply(POLICY);
    await("the policy is seen back")
        .atMost(Duration.ofSeconds(30))
        .until(() -> OperatorHttp.metric(port, PRESENT, "") == 1.0);
    for (String name : new String[] {"job", "token"}) {
      await(name + ", written while it was missing, is not admitted")
          .atMost(Duration.ofSeconds(30))
          .untilAsserted(
              () -> {
                Condition ready =
                    get(client, ns, name).getStatus().getConditions().stream()
                        .filter(c -> Condition.READY.equals(c.getType()))
                        .findFirst()
                        .orElseThrow();
                assertThat(ready.getStatus()).isEqualTo("False");
                assertThat(ready.getReason()).isEqualTo("NotAdmitted");
                assertThat(ready.getMessage()).contains("Write the task again");
                assertThat(Events.count(client, ns, name, "NotAdmitted")).isGreaterThanOrEqualTo(1);
              });
    }
    assertThat(Events.count(client, ns, "job", "NotAdmitted")).isEqualTo(1);
    // Through at least one recheck after the return (while "before" is still to fall due, so the
    // wait
    // for it costs nothing extra).
    await("nothing is created or sent for the tasks written in the gap")
        .during(Duration.ofSeconds(12))
        .atMost(Duration.ofSeconds(20))
        .until(() -> jobsOf("job") == 0 && receiver.requests().isEmpty());
    await("the task written before the gap fires after the policy's return")
        .atMost(Duration.ofSeconds(60))
        .until(() -> jobsOf("before") == 1);

    // Written again (any change of its spec) once the policy is in force: it goes through it and
    // fires.
    client
        .resources(DelayedTask.class)
        .inNamespace(ns)
        .withName("job")
        .edit(
            t -> {
              t.getSpec().setRunAt(rfc3339(Instant.now()));
              return t;
            });
    await("the Job task fires once written again")
        .atMost(RETURN_BOUND)
        .until(() -> jobsOf("job") == 1);
    assertThat(get(client, ns, "job").getStatus().getAdmission())
        .startsWith(get(client, ns, "job").getMetadata().getGeneration() + ".");
    assertThat(jobsOf("token")).isZero();
    assertThat(receiver.requests())
        .as("the token task, never written again, sent nothing")
        .isEmpty();
  }

  @Test
  void aBindingThatOnlyWarnsAPolicyThatFailsOpenOrRulesChangedCountAsMissing() {
    int port = world.operator().httpPort();
    await("the policy is seen in place")
        .atMost(Duration.ofSeconds(30))
        .until(() -> OperatorHttp.metric(port, PRESENT, "") == 1.0);
    String binding = "validatingadmissionpolicybinding/delayed-task-operator-author-rights";
    String policy = "validatingadmissionpolicy/delayed-task-operator-author-rights";
    String[][] breaks = {
      {binding, "{\"spec\":{\"validationActions\":[\"Warn\"]}}"},
      {policy, "{\"spec\":{\"failurePolicy\":\"Ignore\"}}"},
      {
        policy,
        "[{\"op\":\"replace\",\"path\":\"/spec/validations/0/expression\",\"value\":\"true\"}]"
      },
    };
    try {
      for (String[] change : breaks) {
        boolean json = change[1].startsWith("[");
        RealKubernetes.Kubectl.Result patched =
            kube.kubectl("patch", change[0], "--type", json ? "json" : "merge", "-p", change[1]);
        assertThat(patched.ok()).as(patched.output()).isTrue();
        await(change[1] + " counts as missing")
            .atMost(Duration.ofSeconds(30))
            .until(() -> OperatorHttp.metric(port, PRESENT, "") == 0.0);
        apply(POLICY);
        await("restored")
            .atMost(Duration.ofSeconds(30))
            .until(() -> OperatorHttp.metric(port, PRESENT, "") == 1.0);
      }
    } finally {
      apply(POLICY);
    }
  }

  private static long jobsOf(String task) {
    String uid = get(client, ns, task).getMetadata().getUid();
    return client
        .batch()
        .v1()
        .jobs()
        .inNamespace(ns)
        .withLabel(TaskLabels.TASK_UID, uid)
        .list()
        .getItems()
        .size();
  }

  private static DelayedTask withAudience(String name, Instant runAt) {
    return Tasks.task(
        ns,
        name,
        spec -> {
          spec.setRunAt(rfc3339(runAt));
          Destination sink = new Destination();
          sink.setRef(new ServiceReference("v1", "Service", "orders"));
          sink.setUri("/authenticated");
          sink.setAudience("orders");
          spec.setSink(sink);
        });
  }

  private static void apply(Path manifest) {
    RealKubernetes.Kubectl.Result applied = kube.kubectl("apply", "-f", manifest.toString());
    assertThat(applied.ok()).as(applied.output()).isTrue();
  }
}
