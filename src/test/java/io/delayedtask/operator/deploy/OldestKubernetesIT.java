package io.delayedtask.operator.deploy;

import static io.delayedtask.operator.testing.AccessReviews.can;
import static io.delayedtask.operator.testing.Tasks.create;
import static io.delayedtask.operator.testing.Tasks.get;
import static io.delayedtask.operator.testing.Tasks.phase;
import static io.delayedtask.operator.testing.Tasks.rfc3339;
import static io.delayedtask.operator.testing.Tasks.statusOnly;
import static io.delayedtask.operator.testing.Tasks.withJob;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.delayedtask.operator.DelayedTaskOperator;
import io.delayedtask.operator.api.v1alpha1.Condition;
import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.DelayedTaskStatus;
import io.delayedtask.operator.api.v1alpha1.Destination;
import io.delayedtask.operator.api.v1alpha1.Phase;
import io.delayedtask.operator.api.v1alpha1.ServiceReference;
import io.delayedtask.operator.config.OperatorConfig;
import io.delayedtask.operator.config.SinkConfig;
import io.delayedtask.operator.task.job.TaskLabels;
import io.delayedtask.operator.testing.ControlPlaneBinaries;
import io.delayedtask.operator.testing.JobOutcomes;
import io.delayedtask.operator.testing.OperatorFixture;
import io.delayedtask.operator.testing.OperatorHttp;
import io.delayedtask.operator.testing.RealKubernetes;
import io.delayedtask.operator.testing.RealKubernetes.Kubectl;
import io.delayedtask.operator.testing.Receiver;
import io.delayedtask.operator.testing.RedisProcess;
import io.delayedtask.operator.testing.RequiresRealKubernetes;
import io.delayedtask.operator.testing.Tasks;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicy;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.rbac.PolicyRuleBuilder;
import io.fabric8.kubernetes.api.model.rbac.RoleBindingBuilder;
import io.fabric8.kubernetes.api.model.rbac.RoleBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The oldest Kubernetes the docs claim (1.30), run: a 1.30 kube-apiserver and etcd 3.5, built by
 * {@code tools/build-control-plane.sh} beside the newest, on which every other test runs. Here, on
 * 1.30: the generated CRDs are accepted without warnings; every CEL rule and bound of both CRDs
 * refuses its bad input with its own message (the cases of CrdOnRealApiServerIT and
 * QueueCrdOnRealApiServerIT, through server-side apply); the printer columns; status.conditions
 * merged by type under server-side apply; the plain manifests' admission policies, both of them
 * (the author's rights, the status writer) type-checked and refusing with their messages; and the
 * operator with nothing but a token of the plain manifests' ServiceAccount (their least-privilege
 * RBAC) taking one task of each kind (a Job, status only, a sink on 127.0.0.1) to its end, then
 * failing closed once the policy's binding is gone.
 *
 * <p>A server of its own (1.30, and the policies are cluster-wide); the methods run in order, the
 * policy's removal last.
 */
@RequiresRealKubernetes(minor = ControlPlaneBinaries.OLDEST_CLAIMED)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class OldestKubernetesIT {
  private static final Duration ACTIVE = Duration.ofSeconds(60);
  private static final Duration STEP = Duration.ofSeconds(30);
  private static final String OPERATOR_NAMESPACE = "delayed-task-operator";
  private static final String OPERATOR_ACCOUNT = "delayed-task-operator";
  private static final String AUTHOR_RIGHTS = "delayed-task-operator-author-rights";
  private static final String STATUS_WRITER_POLICY = "delayed-task-operator-status-writer";

  /** All verbs on delayedtasks, nothing on Jobs: the first policy refuses its jobTemplate. */
  private static final String TASK_WRITER = "task-writer";

  /**
   * All verbs on delayedtasks and create on Jobs in the namespace: the first policy admits its
   * jobTemplate.
   */
  private static final String JOB_WRITER = "job-writer";

  /** Reads tasks and writes their status: the second policy refuses it. */
  private static final String STATUS_WRITER = "status-writer";

  private static final Path[] INSTALL = {
    Manifests.PLAIN.resolve("00-namespace.yaml"),
    Manifests.PLAIN.resolve("15-admission-policy.yaml"),
    Manifests.PLAIN.resolve("20-serviceaccount.yaml"),
    Manifests.PLAIN.resolve("30-rbac.yaml")
  };

  @TempDir static Path dir;

  private static RealKubernetes kube;
  private static KubernetesClient admin;
  private static String ns;

  @BeforeAll
  static void startKubernetes130AndInstallThePlainManifests() {
    kube = RealKubernetes.startDedicatedOfMinor(ControlPlaneBinaries.OLDEST_CLAIMED);
    admin = kube.client();
    assertThat(admin.getKubernetesVersion().getGitVersion())
        .as("the API server's own version")
        .startsWith("v" + ControlPlaneBinaries.OLDEST_CLAIMED + ".");
    // Type-checks the policies' expressions against the CRD's schema, as on any cluster.
    kube.controllerManager("validatingadmissionpolicy-status-controller");
    for (Path manifest : INSTALL) {
      Kubectl.Result applied = kube.kubectl("apply", "-f", manifest.toString());
      assertThat(applied.ok()).as("%s on 1.30: %s", manifest, applied.output()).isTrue();
      assertThat(applied.stderr())
          .as("warnings for %s", manifest)
          .doesNotContainIgnoringCase("warning");
    }
    ns = kube.createNamespace("apps");
  }

  @AfterAll
  static void stop() {
    if (kube != null) {
      kube.close();
    }
  }

  @Test
  @Order(1)
  void theCommittedCrdsAreAcceptedWithoutWarnings() {
    for (String crd :
        List.of(
            "crds/delayedtasks.delayedtask.io-v1.yml",
            "crds/delayedtaskqueues.delayedtask.io-v1.yml")) {
      Kubectl.Result applied =
          kube.kubectl("apply", "--server-side", "--force-conflicts", "-f", crd);
      assertThat(applied.ok()).as(applied.output()).isTrue();
      assertThat(applied.stderr()).as("warnings for %s", crd).doesNotContainIgnoringCase("warning");
    }
  }

  @ParameterizedTest(name = "DelayedTask: {0} is refused on 1.30")
  @MethodSource("io.delayedtask.operator.api.CrdOnRealApiServerIT#badSpecs")
  @Order(2)
  void everyRuleOfTheTaskCrdRefusesItsBadInputWithItsMessage(
      String what, String spec, String message) {
    assertRefusedByServerSideApply("DelayedTask", spec, message);
  }

  @ParameterizedTest(name = "DelayedTaskQueue: {0} is refused on 1.30")
  @MethodSource("io.delayedtask.operator.api.QueueCrdOnRealApiServerIT#badSpecs")
  @Order(3)
  void everyBoundOfTheQueueCrdRefusesItsBadInputWithItsMessage(
      String what, String spec, String message) {
    assertRefusedByServerSideApply("DelayedTaskQueue", spec, message);
  }

  /**
   * Server-side apply from this JVM, not kubectl: the API server's answer is the same, and some
   * fifty kubectl processes cost a minute on a busy machine. A generic object, so that a value the
   * Java model could not hold ({@code paused: maybe}) reaches the API server as written.
   */
  private static void assertRefusedByServerSideApply(String kind, String spec, String message) {
    GenericKubernetesResource bad =
        Manifests.SERIALIZATION.unmarshal(
            manifest(kind, "bad", spec), GenericKubernetesResource.class);
    assertThatThrownBy(
            () ->
                admin
                    .genericKubernetesResources("delayedtask.io/v1alpha1", kind)
                    .inNamespace(ns)
                    .resource(bad)
                    .fieldManager("oldest-kubernetes-it")
                    .forceConflicts()
                    .serverSideApply())
        .isInstanceOfSatisfying(
            KubernetesClientException.class,
            e -> assertThat(e.getStatus().getMessage()).as(e.getMessage()).contains(message));
  }

  @Test
  @Order(4)
  void kubectlGetPrintsTheColumnsOfBothCrds() {
    Kubectl.Result task =
        apply(
            manifest(
                "DelayedTask",
                "columns",
                "runAt: \"2099-01-01T00:00:00Z\"\n  suspend: true\n  sink: {uri: \"https://hooks.example.com/due\"}"));
    assertThat(task.ok()).as(task.output()).isTrue();
    Kubectl.Result status =
        kube.kubectl(
            "patch",
            "dt",
            "columns",
            "-n",
            ns,
            "--subresource=status",
            "--type=merge",
            "-p",
            "{\"status\":{\"phase\":\"Running\",\"sinkUri\":\"https://hooks.example.com/due\","
                + "\"delivery\":{\"attempts\":2}}}");
    assertThat(status.ok()).as(status.output()).isTrue();
    List<String> wide =
        kube.kubectl("get", "dt", "columns", "-n", ns, "-o", "wide").stdout().lines().toList();
    assertThat(wide.get(0).trim().split("\\s+"))
        .containsExactly("NAME", "PHASE", "DUE", "JOB", "AGE", "ATTEMPTS", "SINK");
    assertThat(wide.get(1))
        .startsWith("columns")
        .contains("Running", " 2 ")
        .endsWith("https://hooks.example.com/due");

    Kubectl.Result queue =
        apply(
            manifest(
                "DelayedTaskQueue",
                "emails",
                "maxDispatchesPerSecond: 20\n  maxConcurrentDispatches: 10\n  paused: true"));
    assertThat(queue.ok()).as(queue.output()).isTrue();
    List<String> queues = kube.kubectl("get", "dtq", "-n", ns).stdout().lines().toList();
    assertThat(queues.get(0).trim().split("\\s+"))
        .containsExactly("NAME", "PAUSED", "RATE", "CONCURRENCY", "WAITING", "IN-FLIGHT", "AGE");
    assertThat(queues.get(1).trim().split("\\s+")).startsWith("emails", "true", "20", "10");
  }

  /**
   * status.conditions is a map list keyed by type: two field managers applying a condition each
   * keep both, one re-applying its own changes only its own, and two of one type are refused.
   */
  @Test
  @Order(5)
  void serverSideApplyMergesStatusConditionsByType() {
    create(
        admin,
        Tasks.task(
            ns,
            "conditions",
            s -> {
              s.setRunAt("2099-01-01T00:00:00Z");
              s.setSuspend(true);
            }));
    applyCondition("reconciler", "Ready", "True");
    applyCondition("scheduler", "Scheduled", "False");
    applyCondition("reconciler", "Ready", "False");

    List<Condition> conditions = get(admin, ns, "conditions").getStatus().getConditions();
    assertThat(conditions).extracting(Condition::getType).containsExactly("Ready", "Scheduled");
    assertThat(conditions).extracting(Condition::getStatus).containsExactly("False", "False");

    String twice =
        "{\"type\":\"Ready\",\"status\":\"True\",\"reason\":\"Twice\",\"lastTransitionTime\":"
            + "\"2026-12-04T00:00:00Z\"}";
    Kubectl.Result duplicate =
        kube.kubectl(
            "patch",
            "dt",
            "conditions",
            "-n",
            ns,
            "--subresource=status",
            "--type=merge",
            "-p",
            "{\"status\":{\"conditions\":[" + twice + "," + twice + "]}}");
    assertThat(duplicate.ok()).as(duplicate.output()).isFalse();
    assertThat(duplicate.output()).contains("status.conditions[1]", "Duplicate value");
  }

  /**
   * Both policies of k8s/15-admission-policy.yaml, type-checked and refusing with their messages.
   */
  @Test
  @Order(6)
  void bothAdmissionPoliciesAreTypeCheckedAndRefuseWithTheirMessages() {
    for (String name : List.of(AUTHOR_RIGHTS, STATUS_WRITER_POLICY)) {
      await("the status of " + name)
          .atMost(ACTIVE)
          .ignoreExceptions()
          .untilAsserted(
              () -> {
                ValidatingAdmissionPolicy stored =
                    admin
                        .admissionRegistration()
                        .v1()
                        .validatingAdmissionPolicies()
                        .withName(name)
                        .get();
                assertThat(stored.getStatus().getObservedGeneration())
                    .isEqualTo(stored.getMetadata().getGeneration());
                assertThat(stored.getStatus().getTypeChecking().getExpressionWarnings())
                    .as("the expressions of %s type-check against the DelayedTask schema", name)
                    .isNullOrEmpty();
              });
    }
    bindRole(
        TASK_WRITER,
        new PolicyRuleBuilder()
            .withApiGroups("delayedtask.io")
            .withResources("delayedtasks")
            .withVerbs("*")
            .build());
    bindRole(
        JOB_WRITER,
        new PolicyRuleBuilder()
            .withApiGroups("delayedtask.io")
            .withResources("delayedtasks")
            .withVerbs("*")
            .build(),
        new PolicyRuleBuilder()
            .withApiGroups("batch")
            .withResources("jobs")
            .withVerbs("create")
            .build());
    bindRole(
        STATUS_WRITER,
        new PolicyRuleBuilder()
            .withApiGroups("delayedtask.io")
            .withResources("delayedtasks")
            .withVerbs("get", "list", "watch")
            .build(),
        new PolicyRuleBuilder()
            .withApiGroups("delayedtask.io")
            .withResources("delayedtasks/status")
            .withVerbs("get", "update", "patch")
            .build());
    create(admin, statusOnly(ns, "written-by-admin", Instant.now().plus(Duration.ofHours(1))));

    try (KubernetesClient taskWriter = kube.impersonating(TASK_WRITER, ns);
        KubernetesClient jobWriter = kube.impersonating(JOB_WRITER, ns);
        KubernetesClient statusWriter = kube.impersonating(STATUS_WRITER, ns)) {
      await("the author-rights policy refuses")
          .atMost(ACTIVE)
          .untilAsserted(
              () ->
                  assertRefused(
                      () ->
                          taskWriter
                              .resource(
                                  withJob(ns, "refused", Instant.now().plus(Duration.ofHours(1))))
                              .create(),
                      "a DelayedTask with spec.jobTemplate creates Jobs, and "
                          + TASK_WRITER
                          + " may not create Jobs in namespace "
                          + ns
                          + ": ask for the create verb on jobs.batch there, or remove spec.jobTemplate"));
      assertThat(
              taskWriter
                  .resource(statusOnly(ns, "admitted", Instant.now().plus(Duration.ofHours(1))))
                  .create())
          .as("a task without a jobTemplate passes")
          .isNotNull();
      // Job rights in this namespace only (a Role): admitted only if the check asks about this
      // namespace.
      assertThat(
              jobWriter
                  .resource(withJob(ns, "admitted-job", Instant.now().plus(Duration.ofHours(1))))
                  .create())
          .as("a jobTemplate from whoever may create Jobs in the namespace passes")
          .isNotNull();

      await("the status-writer policy refuses")
          .atMost(ACTIVE)
          .untilAsserted(
              () ->
                  assertRefused(
                      () ->
                          statusWriter
                              .resources(DelayedTask.class)
                              .inNamespace(ns)
                              .withName("written-by-admin")
                              .subresource("status")
                              .patch(
                                  PatchContext.of(PatchType.JSON_MERGE),
                                  "{\"status\":{\"phase\":\"Scheduled\"}}"),
                      STATUS_WRITER
                          + " may not write the status of DelayedTask "
                          + ns
                          + "/written-by-admin: only the operator "
                          + "(system:serviceaccount:"
                          + OPERATOR_NAMESPACE
                          + ":"
                          + OPERATOR_ACCOUNT
                          + ") writes it, as the status"
                          + " decides what fires; change the spec instead"));
    }
    assertThat(get(admin, ns, "written-by-admin").getStatus()).as("nothing written").isNull();
  }

  /**
   * The operator with only a token of the plain manifests' ServiceAccount (their ClusterRoles and
   * Lease Role, every namespace watched, the admission check on), taking a task of each kind to its
   * end; then, with the author-rights binding deleted, a due Job task waits instead of firing.
   */
  @Test
  @Order(7)
  void underTheLeastPrivilegeRbacATaskOfEachKindRunsAndAJobTaskWaitsWithoutThePolicy() {
    Path kubeconfig =
        kube.serviceAccountKubeconfig(
            OPERATOR_NAMESPACE, OPERATOR_ACCOUNT, dir.resolve("operator"));
    try (Receiver receiver = Receiver.start();
        RedisProcess redis = RedisProcess.start();
        KubernetesClient asOperator = RealKubernetes.clientOf(kubeconfig)) {
      // The sink: a Service naming this host's receiver.
      admin
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
      assertThat(can(asOperator, "get", "", "secrets", ns, null)).as("reads no Secret").isFalse();
      assertThat(can(asOperator, "delete", "batch", "jobs", ns, null))
          .as("deletes no Job")
          .isFalse();
      assertThat(can(asOperator, "list", "", "secrets", ns, "delayedtask-signing"))
          .as("lists the signing Secret by its name")
          .isTrue();

      Map<String, String> env = OperatorFixture.env(redis, "oldest", "oldest-0");
      env.put(OperatorConfig.NAMESPACES, "");
      env.put(OperatorConfig.LEASE_NAMESPACE, OPERATOR_NAMESPACE);
      env.put(OperatorConfig.LEASE_NAME, "delayed-task-operator");
      env.put(
          OperatorConfig.ADMISSION_POLICY,
          String.join(",", OperatorConfig.DEFAULT_ADMISSION_POLICY_BINDINGS));
      env.put(SinkConfig.ALLOWED_URIS, "http://localhost:" + receiver.port() + "/orders/");
      try (DelayedTaskOperator operator = OperatorFixture.start(env, asOperator)) {
        await("the operator leads").atMost(ACTIVE).until(operator::isFiring);
        // ignoreExceptions: on a busy machine a scrape can time out.
        await("it sees the policy")
            .atMost(STEP)
            .ignoreExceptions()
            .until(
                () ->
                    OperatorHttp.metric(
                            operator.httpPort(), "delayedtask_admission_policy_present", "")
                        == 1.0);
        aTaskOfEachKindRuns(receiver);
        aJobTaskWaitsOnceThePolicyIsGone(operator);
      }
    }
  }

  private static void aTaskOfEachKindRuns(Receiver receiver) {
    Instant now = Instant.now();
    create(admin, withJob(ns, "job", now));
    create(admin, statusOnly(ns, "status-only", now));
    create(
        admin,
        Tasks.task(
            ns,
            "sink",
            s -> {
              s.setRunAt(rfc3339(now));
              Destination sink = new Destination();
              sink.setRef(new ServiceReference("v1", "Service", "orders"));
              sink.setUri("/orders/due");
              s.setSink(sink);
            }));

    await("the status-only task fires")
        .atMost(STEP)
        .until(() -> phase(admin, ns, "status-only").orElse(null) == Phase.Fired);
    await("the sink task is delivered")
        .atMost(STEP)
        .until(() -> phase(admin, ns, "sink").orElse(null) == Phase.Succeeded);
    assertThat(receiver.requestsTo("/orders/due"))
        .singleElement()
        .satisfies(request -> assertThat(request.method()).isEqualTo("POST"));

    await("the Job task runs")
        .atMost(STEP)
        .until(() -> phase(admin, ns, "job").orElse(null) == Phase.Running);
    DelayedTask running = get(admin, ns, "job");
    Job job =
        admin.batch().v1().jobs().inNamespace(ns).withName(running.getStatus().getJobName()).get();
    assertThat(job.getMetadata().getOwnerReferences())
        .singleElement()
        .satisfies(ref -> assertThat(ref.getUid()).isEqualTo(running.getMetadata().getUid()));
    JobOutcomes.complete(admin, job);
    await("the Job task succeeds with its Job")
        .atMost(STEP)
        .until(() -> phase(admin, ns, "job").orElse(null) == Phase.Succeeded);
  }

  private static void aJobTaskWaitsOnceThePolicyIsGone(DelayedTaskOperator operator) {
    Kubectl.Result deleted =
        kube.kubectl("delete", "validatingadmissionpolicybinding", AUTHOR_RIGHTS);
    assertThat(deleted.ok()).as(deleted.output()).isTrue();
    await("the operator sees it gone")
        .atMost(STEP)
        .ignoreExceptions()
        .until(
            () ->
                OperatorHttp.metric(operator.httpPort(), "delayedtask_admission_policy_present", "")
                    == 0.0);

    create(admin, withJob(ns, "unchecked", Instant.now()));
    await("it waits, not ready, saying why")
        .atMost(STEP)
        .untilAsserted(
            () -> {
              DelayedTaskStatus status = get(admin, ns, "unchecked").getStatus();
              assertThat(status).as("a status written").isNotNull();
              assertThat(status.getPhase()).isEqualTo(Phase.Scheduled);
              assertThat(status.getConditions())
                  .filteredOn(c -> Condition.READY.equals(c.getType()))
                  .singleElement()
                  .satisfies(
                      ready -> assertThat(ready.getReason()).isEqualTo("AdmissionPolicyMissing"));
            });
    String uid = get(admin, ns, "unchecked").getMetadata().getUid();
    await("and creates no Job")
        .during(Duration.ofSeconds(3))
        .atMost(Duration.ofSeconds(10))
        .until(
            () ->
                admin
                    .batch()
                    .v1()
                    .jobs()
                    .inNamespace(ns)
                    .withLabel(TaskLabels.TASK_UID, uid)
                    .list()
                    .getItems()
                    .isEmpty());
  }

  private static void applyCondition(String manager, String type, String status) {
    String body =
        """
        {"apiVersion": "delayedtask.io/v1alpha1", "kind": "DelayedTask", "metadata": {"name": "conditions"},
         "status": {"conditions": [{"type": "%s", "status": "%s", "reason": "Applied",
                                    "lastTransitionTime": "2026-12-04T00:00:00Z"}]}}
        """
            .formatted(type, status);
    admin
        .resources(DelayedTask.class)
        .inNamespace(ns)
        .withName("conditions")
        .subresource("status")
        .patch(
            new PatchContext.Builder()
                .withPatchType(PatchType.SERVER_SIDE_APPLY)
                .withFieldManager(manager)
                .withForce(true)
                .build(),
            body);
  }

  private static void assertRefused(Runnable request, String message) {
    assertThatThrownBy(request::run)
        .isInstanceOfSatisfying(
            KubernetesClientException.class,
            e -> {
              assertThat(e.getCode()).as(e.getMessage()).isEqualTo(403);
              assertThat(e.getStatus().getMessage()).endsWith(message);
            });
  }

  private static void bindRole(
      String user, io.fabric8.kubernetes.api.model.rbac.PolicyRule... rules) {
    admin
        .rbac()
        .roles()
        .inNamespace(ns)
        .resource(
            new RoleBuilder()
                .withNewMetadata()
                .withName(user)
                .endMetadata()
                .withRules(rules)
                .build())
        .create();
    admin
        .rbac()
        .roleBindings()
        .inNamespace(ns)
        .resource(
            new RoleBindingBuilder()
                .withNewMetadata()
                .withName(user)
                .endMetadata()
                .withNewRoleRef()
                .withApiGroup("rbac.authorization.k8s.io")
                .withKind("Role")
                .withName(user)
                .endRoleRef()
                .addNewSubject()
                .withApiGroup("rbac.authorization.k8s.io")
                .withKind("User")
                .withName(user)
                .endSubject()
                .build())
        .create();
  }

  private static Kubectl.Result apply(String manifest, String... flags) {
    String[] args =
        Stream.concat(Stream.of("apply", "-n", ns, "-f", "-"), Stream.of(flags))
            .toArray(String[]::new);
    return kube.kubectl(kube.kubeconfig()).run(Duration.ofSeconds(60), manifest, args);
  }

  private static String manifest(String kind, String name, String spec) {
    return """
        apiVersion: delayedtask.io/v1alpha1
        kind: %s
        metadata:
          name: %s
        spec:
          %s
        """
        .formatted(kind, name, spec);
  }
}
