package io.delayedtask.operator.deploy;

import static io.delayedtask.operator.testing.AccessReviews.can;
import static io.delayedtask.operator.testing.Tasks.busyboxJob;
import static io.delayedtask.operator.testing.Tasks.create;
import static io.delayedtask.operator.testing.Tasks.get;
import static io.delayedtask.operator.testing.Tasks.phase;
import static io.delayedtask.operator.testing.Tasks.task;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.Phase;
import io.delayedtask.operator.config.OperatorConfig;
import io.delayedtask.operator.testing.Events;
import io.delayedtask.operator.testing.JobOutcomes;
import io.delayedtask.operator.testing.OperatorProcess;
import io.delayedtask.operator.testing.RealKubernetes;
import io.delayedtask.operator.testing.RedisProcess;
import io.delayedtask.operator.testing.RequiresLoopbackOnlyNetwork;
import io.delayedtask.operator.testing.RequiresRealKubernetes;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.authentication.TokenRequest;
import io.fabric8.kubernetes.api.model.authentication.TokenRequestBuilder;
import io.fabric8.kubernetes.api.model.authentication.TokenReview;
import io.fabric8.kubernetes.api.model.authentication.TokenReviewBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobBuilder;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The operator jar run with nothing but a TokenRequest token of the chart's ServiceAccount, so the
 * API server grants it exactly what the chart's RBAC says: the whole life cycle works (Lease,
 * status, Job, Events, TTL deletion), with the ClusterRole of the default values and with the Roles
 * of {@code watchNamespaces}; and that identity cannot read Secrets, write another Lease, create
 * Jobs outside the listed namespaces, or request a token of any ServiceAccount but the sender one
 * (sink.serviceAccount).
 *
 * <p>A server of its own: the default values watch every namespace, which would fire other test
 * classes' tasks on the shared server; and here OwnerReferencesPermissionEnforcement is on (as on
 * OpenShift), so a Job's {@code blockOwnerDeletion} owner reference needs the chart's {@code
 * delayedtasks/finalizers} grant.
 */
@RequiresRealKubernetes
@RequiresLoopbackOnlyNetwork
class LeastPrivilegeIT {
  private static final Duration START = Duration.ofSeconds(120);
  private static final Duration STEP = Duration.ofSeconds(30);

  @TempDir static Path dir;

  private static RealKubernetes kube;
  private static KubernetesClient admin;
  private static ChartRelease everywhere;
  private static ChartRelease scoped;
  private static String teamA;
  private static String teamB;
  private static String outsider;

  @BeforeAll
  static void installTheChartTwice() {
    kube =
        RealKubernetes.startDedicated(
            "--enable-admission-plugins=OwnerReferencesPermissionEnforcement");
    admin = kube.client();
    String opsScoped = kube.createNamespace("ops-scoped");
    // Two releases on one cluster: the one watching every namespace lets the other's operator write
    // the status of the tasks in its namespaces (the status policy admits only its own otherwise).
    everywhere =
        ChartRelease.install(
            kube,
            "all",
            kube.createNamespace("ops-all"),
            "admissionPolicy: {statusWriters: ['system:serviceaccount:%s:scoped-delayed-task-operator']}%n"
                .formatted(opsScoped));
    teamA = kube.createNamespace("team-a");
    teamB = kube.createNamespace("team-b");
    outsider = kube.createNamespace("outsider");
    scoped =
        ChartRelease.install(
            kube, "scoped", opsScoped, "watchNamespaces: [%s, %s]%n".formatted(teamA, teamB));
  }

  @AfterAll
  static void stop() {
    if (kube != null) {
      kube.close();
    }
  }

  @Test
  void theWholeLifeCycleRunsUnderTheClusterRoleOfTheDefaultValues() {
    lifeCycle(everywhere, kube.createNamespace("apps"));
  }

  @Test
  void theWholeLifeCycleRunsUnderTheRolesOfWatchNamespaces() {
    lifeCycle(scoped, teamB);
  }

  @Test
  void theServiceAccountReadsNoSecretButListsAndWatchesTheSigningSecretByItsName() {
    for (ChartRelease release : List.of(everywhere, scoped)) {
      try (KubernetesClient operator = clientOf(release)) {
        for (String ns : List.of(release.namespace(), teamA, outsider)) {
          for (String verb : List.of("get", "list", "watch")) {
            assertThat(can(operator, verb, "", "secrets", ns, null))
                .as("%s may %s secrets in %s", release.name(), verb, ns)
                .isFalse();
            assertThat(can(operator, verb, "", "secrets", ns, "orders"))
                .as("%s may %s the secret orders in %s", release.name(), verb, ns)
                .isFalse();
          }
          assertThat(can(operator, "get", "", "secrets", ns, Rbac.SIGNING))
              .as(
                  "%s may get the signing secret in %s: it only lists and watches it",
                  release.name(), ns)
              .isFalse();
        }
        for (String verb : List.of("list", "watch")) {
          assertThat(can(operator, verb, "", "secrets", teamA, Rbac.SIGNING))
              .as("%s may %s the signing secret in a watched namespace", release.name(), verb)
              .isTrue();
        }
        assertThat(can(operator, "list", "", "secrets", outsider, Rbac.SIGNING))
            .as("%s may list the signing secret in a namespace it does not watch", release.name())
            .isEqualTo(release == everywhere);
        assertThat(can(operator, "list", "", "secrets", null, null)).as("cluster-wide").isFalse();
        assertForbidden(() -> operator.secrets().inNamespace(release.namespace()).list());
        assertForbidden(() -> operator.secrets().inNamespace(teamA).list());
        assertForbidden(
            () ->
                operator.secrets().inNamespace(teamA).withField("metadata.name", "orders").list());
        assertThat(
                operator
                    .secrets()
                    .inNamespace(teamA)
                    .withField("metadata.name", Rbac.SIGNING)
                    .list()
                    .getItems())
            .as("the one list it may make")
            .isNotNull();
      }
    }
  }

  @Test
  void theServiceAccountMayWriteItsOwnLeaseButNoLeaseOfAnotherName() {
    for (ChartRelease release : List.of(everywhere, scoped)) {
      String ns = release.namespace();
      admin
          .resources(Lease.class)
          .inNamespace(ns)
          .resource(
              new LeaseBuilder()
                  .withNewMetadata()
                  .withName("another-controller")
                  .endMetadata()
                  .withNewSpec()
                  .withHolderIdentity("another-controller-0")
                  .withLeaseDurationSeconds(15)
                  .endSpec()
                  .build())
          .create();
      try (KubernetesClient operator = clientOf(release)) {
        for (String verb : List.of("get", "update", "patch")) {
          assertThat(can(operator, verb, "coordination.k8s.io", "leases", ns, release.fullname()))
              .as("%s its own Lease (the test's control)", verb)
              .isTrue();
          assertThat(can(operator, verb, "coordination.k8s.io", "leases", ns, "another-controller"))
              .as("%s another Lease", verb)
              .isFalse();
        }
        assertThat(can(operator, "delete", "coordination.k8s.io", "leases", ns, release.fullname()))
            .isFalse();
        assertThat(can(operator, "create", "coordination.k8s.io", "leases", outsider, null))
            .as("no Lease outside the release namespace")
            .isFalse();

        Lease theirs =
            admin.resources(Lease.class).inNamespace(ns).withName("another-controller").get();
        theirs.getSpec().setHolderIdentity(release.fullname());
        assertForbidden(
            () -> operator.resources(Lease.class).inNamespace(ns).resource(theirs).update());
        assertForbidden(
            () ->
                operator
                    .resources(Lease.class)
                    .inNamespace(ns)
                    .withName("another-controller")
                    .patch(
                        PatchContext.of(PatchType.JSON_MERGE),
                        "{\"spec\":{\"holderIdentity\":\"taken\"}}"));
        assertThat(
                admin
                    .resources(Lease.class)
                    .inNamespace(ns)
                    .withName("another-controller")
                    .get()
                    .getSpec()
                    .getHolderIdentity())
            .isEqualTo("another-controller-0");
      }
    }
  }

  @Test
  void withWatchNamespacesTheServiceAccountCreatesJobsOnlyInTheListedNamespaces() {
    try (KubernetesClient operator = clientOf(scoped)) {
      for (String listed : List.of(teamA, teamB)) {
        assertThat(can(operator, "create", "batch", "jobs", listed, null))
            .as("Jobs in %s", listed)
            .isTrue();
        assertThat(can(operator, "list", "delayedtask.io", "delayedtasks", listed, null)).isTrue();
        operator.batch().v1().jobs().inNamespace(listed).resource(job("allowed")).dryRun().create();
      }
      for (String other : List.of(outsider, scoped.namespace(), "default", "kube-system")) {
        assertThat(can(operator, "create", "batch", "jobs", other, null))
            .as("Jobs in %s", other)
            .isFalse();
        assertThat(can(operator, "list", "delayedtask.io", "delayedtasks", other, null))
            .as("DelayedTasks in %s", other)
            .isFalse();
      }
      assertThat(can(operator, "list", "delayedtask.io", "delayedtasks", null, null))
          .as("cluster-wide")
          .isFalse();
      assertForbidden(
          () ->
              operator
                  .batch()
                  .v1()
                  .jobs()
                  .inNamespace(outsider)
                  .resource(job("refused"))
                  .dryRun()
                  .create());
    }
    try (KubernetesClient operator = clientOf(everywhere)) {
      assertThat(can(operator, "create", "batch", "jobs", outsider, null))
          .as("the default values watch every namespace")
          .isTrue();
      assertThat(can(operator, "delete", "batch", "jobs", outsider, null))
          .as("Jobs are collected through their owner reference, never deleted")
          .isFalse();
    }
  }

  @Test
  void theServiceAccountRequestsTokensOfTheSenderServiceAccountOnlyAndOnlyWhereItWatches() {
    for (String ns : List.of(teamA, outsider)) {
      for (String name : List.of(Rbac.SENDER, "orders")) {
        admin
            .serviceAccounts()
            .inNamespace(ns)
            .resource(
                new ServiceAccountBuilder().withNewMetadata().withName(name).endMetadata().build())
            .create();
      }
    }
    for (ChartRelease release : List.of(everywhere, scoped)) {
      try (KubernetesClient operator = clientOf(release)) {
        String token = senderToken(operator, teamA, Rbac.SENDER);
        TokenReview review =
            admin
                .authentication()
                .v1()
                .tokenReviews()
                .create(
                    new TokenReviewBuilder()
                        .withNewSpec()
                        .withToken(token)
                        .withAudiences("orders")
                        .endSpec()
                        .build());
        assertThat(review.getStatus().getAuthenticated())
            .as("%s: a token for the audience asked", release.name())
            .isTrue();
        assertThat(review.getStatus().getUser().getUsername())
            .isEqualTo("system:serviceaccount:" + teamA + ":" + Rbac.SENDER);

        assertForbidden(() -> senderToken(operator, teamA, "orders"));
        assertForbidden(() -> senderToken(operator, release.namespace(), release.fullname()));
        assertThat(can(operator, "get", "", "serviceaccounts", teamA, Rbac.SENDER)).isFalse();
        assertThat(can(operator, "list", "", "serviceaccounts", teamA, null)).isFalse();
      }
    }
    try (KubernetesClient operator = clientOf(everywhere)) {
      assertThat(senderToken(operator, outsider, Rbac.SENDER))
          .as("the default values watch every namespace")
          .isNotBlank();
    }
    try (KubernetesClient operator = clientOf(scoped)) {
      assertForbidden(() -> senderToken(operator, outsider, Rbac.SENDER));
    }
  }

  @Test
  void
      theServiceAccountListsAndWatchesServicesEndpointSlicesAndPodsButCannotReadOneByNameOrChangeThem() {
    for (String ns : List.of(teamA, outsider)) {
      admin
          .services()
          .inNamespace(ns)
          .resource(
              new ServiceBuilder()
                  .withNewMetadata()
                  .withName("orders")
                  .endMetadata()
                  .withNewSpec()
                  .addNewPort()
                  .withName("http")
                  .withPort(8080)
                  .endPort()
                  .endSpec()
                  .build())
          .create();
    }
    for (ChartRelease release : List.of(everywhere, scoped)) {
      try (KubernetesClient operator = clientOf(release)) {
        assertThat(operator.services().inNamespace(teamA).list().getItems())
            .extracting(service -> service.getMetadata().getName())
            .containsExactly("orders");
        assertThat(operator.discovery().v1().endpointSlices().inNamespace(teamA).list().getItems())
            .isNotNull();
        for (String[] resource :
            new String[][] {
              {"", "services"}, {"discovery.k8s.io", "endpointslices"}, {"", "pods"}
            }) {
          assertThat(can(operator, "watch", resource[0], resource[1], teamA, null))
              .as("watch %s", resource[1])
              .isTrue();
          for (String verb : List.of("get", "update", "patch", "delete", "create")) {
            assertThat(can(operator, verb, resource[0], resource[1], teamA, null))
                .as("%s %s", verb, resource[1])
                .isFalse();
          }
        }
      }
    }
    try (KubernetesClient operator = clientOf(scoped)) {
      assertForbidden(() -> operator.services().inNamespace(outsider).list());
      assertForbidden(
          () -> operator.discovery().v1().endpointSlices().inNamespace(outsider).list());
      assertForbidden(() -> operator.pods().inNamespace(outsider).list());
    }
  }

  /**
   * A token of {@code namespace/serviceAccount} for the audience "orders", requested as a
   * sink.audience is.
   */
  private static String senderToken(
      KubernetesClient identity, String namespace, String serviceAccount) {
    TokenRequest request =
        new TokenRequestBuilder()
            .withNewSpec()
            .withAudiences("orders")
            .withExpirationSeconds(600L)
            .endSpec()
            .build();
    return identity
        .serviceAccounts()
        .inNamespace(namespace)
        .withName(serviceAccount)
        .tokenRequest(request)
        .getStatus()
        .getToken();
  }

  /**
   * Starts the jar as the chart's Deployment would (its DELAYEDTASK_* environment, the Lease in the
   * release namespace) with the ServiceAccount's token, and takes one task with a Job and one with
   * a TTL through their life cycles.
   */
  private static void lifeCycle(ChartRelease release, String ns) {
    String pod = release.fullname() + "-5d8f9c7b6-x2x4k";
    Path kubeconfig = release.serviceAccountKubeconfig(dir.resolve(release.name() + ".kubeconfig"));
    try (RedisProcess redis = RedisProcess.start()) {
      Map<String, String> env = new HashMap<>(release.operatorEnvironment(pod));
      assertThat(env)
          .containsKeys(OperatorConfig.LEASE_NAME, OperatorConfig.IDENTITY, "POD_NAMESPACE");
      env.put("KUBECONFIG", kubeconfig.toString());
      // The chart points at its bundled Redis Service, which has no pod here; and port 8080 may be
      // taken.
      env.put(OperatorConfig.REDIS_URI, redis.uri());
      env.put(OperatorConfig.HTTP_PORT, "0");
      try (OperatorProcess operator = OperatorProcess.start(pod, env)) {
        try {
          runLifeCycle(release, ns, pod, operator);
        } catch (AssertionError | RuntimeException e) {
          throw new AssertionError(e.getMessage() + "\noperator log:\n" + operator.log(), e);
        }
      }
    }
  }

  private static void runLifeCycle(
      ChartRelease release, String ns, String pod, OperatorProcess operator) {
    await("the operator leads through its Lease")
        .atMost(START)
        .untilAsserted(
            () -> {
              assertThat(operator.isAlive()).isTrue();
              Lease lease =
                  admin
                      .resources(Lease.class)
                      .inNamespace(release.namespace())
                      .withName(release.fullname())
                      .get();
              assertThat(lease).isNotNull();
              assertThat(lease.getSpec().getHolderIdentity()).isEqualTo(pod);
            });

    create(
        admin,
        task(
            ns,
            "report",
            s -> {
              s.setDelay("2s");
              s.setJobTemplate(busyboxJob());
            }));
    await().atMost(START).until(() -> phase(admin, ns, "report").orElse(null) == Phase.Running);
    DelayedTask running = get(admin, ns, "report");
    assertThat(running.getMetadata().getFinalizers())
        .as("no finalizer: a delete never waits for the operator")
        .isEmpty();
    assertThat(running.getStatus().getObservedGeneration())
        .isEqualTo(running.getMetadata().getGeneration());
    Job job =
        admin.batch().v1().jobs().inNamespace(ns).withName(running.getStatus().getJobName()).get();
    assertThat(job).as("the Job the task created").isNotNull();
    assertThat(job.getMetadata().getOwnerReferences())
        .singleElement()
        .satisfies(
            ref -> {
              assertThat(ref.getUid()).isEqualTo(running.getMetadata().getUid());
              assertThat(ref.getBlockOwnerDeletion()).isTrue();
            });

    JobOutcomes.complete(admin, job);
    await().atMost(STEP).until(() -> phase(admin, ns, "report").orElse(null) == Phase.Succeeded);
    await()
        .atMost(STEP)
        .untilAsserted(
            () ->
                assertThat(Events.reasons(admin, ns, "report"))
                    .contains("Scheduled", "JobCreated", "Succeeded"));

    create(
        admin,
        task(
            ns,
            "short-lived",
            s -> {
              s.setDelay("0s");
              s.setTtlSecondsAfterFinished(1L);
            }));
    await().atMost(STEP).until(() -> get(admin, ns, "short-lived") == null);
    assertThat(Events.reasons(admin, ns, "short-lived")).contains("Fired");

    assertThat(operator.isAlive()).isTrue();
    assertThat(operator.log())
        .as("nothing the chart's RBAC refused")
        .doesNotContainIgnoringCase("forbidden");
  }

  private static KubernetesClient clientOf(ChartRelease release) {
    return RealKubernetes.clientOf(
        release.serviceAccountKubeconfig(dir.resolve(release.name() + "-review.kubeconfig")));
  }

  private static void assertForbidden(Runnable request) {
    assertThatThrownBy(request::run)
        .isInstanceOfSatisfying(
            KubernetesClientException.class,
            e -> assertThat(e.getCode()).as(e.getMessage()).isEqualTo(403));
  }

  private static Job job(String name) {
    return new JobBuilder()
        .withNewMetadata()
        .withName(name)
        .endMetadata()
        .withSpec(busyboxJob().getSpec())
        .build();
  }
}
