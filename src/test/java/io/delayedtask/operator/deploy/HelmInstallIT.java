package io.delayedtask.operator.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.delayedtask.operator.config.OperatorConfig;
import io.delayedtask.operator.testing.RealKubernetes;
import io.delayedtask.operator.testing.RequiresRealKubernetes;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code helm install} of the chart into a real API server (its own, so that the CRD comes from the
 * chart's {@code templates/crd.yaml} and not from the test toolkit): every template is accepted by
 * the server's validation, and the objects are there, with default values and with {@code
 * watchNamespaces} (plus the optional NetworkPolicy).
 */
@RequiresRealKubernetes
class HelmInstallIT {
  private static final String CRD = "delayedtasks.delayedtask.io";
  private static final Path CHART_CRD = Path.of("crds", CRD + "-v1.yml");

  /** A Secret's data, so a Helm release's, is at most 1 MiB. */
  private static final int SECRET_LIMIT = 1024 * 1024;

  private static RealKubernetes kube;
  private static KubernetesClient client;
  private static final String QUEUE_CRD = "delayedtaskqueues.delayedtask.io";
  private static ChartRelease defaults;
  private static ChartRelease scoped;
  private static String teamA;
  private static String teamB;

  @BeforeAll
  static void startAServerWithoutTheCrd() {
    // A server that never had the build's CRDs, so that only the chart can bring them.
    kube = RealKubernetes.startDedicatedWithoutCrds();
    client = kube.client();
    assertThat(client.apiextensions().v1().customResourceDefinitions().withName(CRD).get())
        .isNull();
    assertThat(client.apiextensions().v1().customResourceDefinitions().withName(QUEUE_CRD).get())
        .isNull();

    // Any template the server refuses (schema, validation, admission) fails the install itself.
    defaults = ChartRelease.install(kube, "dto", kube.createNamespace("helm-defaults"), "{}");
    teamA = kube.createNamespace("team-a");
    teamB = kube.createNamespace("team-b");
    // With every value a Helm user reaches for beyond the defaults, so the server judges them too.
    // The CRD is the first release's: a second one in the cluster leaves it out
    // (helmUpgradeUpdatesTheCrd...).
    scoped =
        ChartRelease.install(
            kube,
            "scoped",
            kube.createNamespace("helm-watching"),
            """
        crds: {enabled: false}
        watchNamespaces: [%s, %s]
        networkPolicy: {enabled: true}
        image: {digest: "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}
        logLevel: DEBUG
        logFormat: json
        defaultStartingDeadlineSeconds: 3600
        extraEnv: [{name: JAVA_TOOL_OPTIONS, value: "-Djavax.net.ssl.trustStore=/etc/truststore/truststore.p12"}]
        extraVolumes: [{name: truststore, secret: {secretName: redis-ca-truststore}}]
        extraVolumeMounts: [{name: truststore, mountPath: /etc/truststore, readOnly: true}]
        topologySpreadConstraints:
          - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: ScheduleAnyway,
             labelSelector: {matchLabels: {app.kubernetes.io/instance: scoped}}}
        redis:
          bundled:
            podAnnotations: {backup.velero.io/backup-volumes: data}
            affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 1,
              preference: {matchExpressions: [{key: pool, operator: In, values: [stateful]}]}}]}}
        """
                .formatted(teamA, teamB));
  }

  @AfterAll
  static void stop() {
    if (kube != null) {
      kube.close();
    }
  }

  @Test
  void defaultValuesInstallTheCrdAndEveryObjectAndTheCrdIsServed() {
    ChartRelease release = defaults;
    String ns = release.namespace();
    assertThat(release.release().getStatus()).isEqualTo("deployed");
    String fullname = release.fullname();

    CustomResourceDefinition expected =
        Manifests.SERIALIZATION.unmarshal(readString(CHART_CRD), CustomResourceDefinition.class);
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () -> {
              CustomResourceDefinition served =
                  client.apiextensions().v1().customResourceDefinitions().withName(CRD).get();
              assertThat(served).as("the CRD from the chart's templates/crd.yaml").isNotNull();
              assertThat(served.getMetadata().getAnnotations())
                  .containsEntry("helm.sh/resource-policy", "keep")
                  .containsEntry("meta.helm.sh/release-name", "dto");
              assertThat(served.getStatus().getConditions())
                  .anySatisfy(
                      c ->
                          assertThat(c.getType() + "=" + c.getStatus())
                              .isEqualTo("Established=True"));
              assertThat(served.getSpec().getVersions())
                  .extracting(v -> v.getName())
                  .containsExactlyElementsOf(
                      expected.getSpec().getVersions().stream().map(v -> v.getName()).toList());
              assertThat(served.getSpec().getVersions().get(0).getAdditionalPrinterColumns())
                  .extracting(c -> c.getName())
                  .containsExactlyElementsOf(
                      expected.getSpec().getVersions().get(0).getAdditionalPrinterColumns().stream()
                          .map(c -> c.getName())
                          .toList());
            });
    RealKubernetes.Kubectl.Result columns = kube.kubectl("get", "dt", "-n", ns);
    assertThat(columns.ok())
        .as("the API server serves DelayedTasks: %s", columns.output())
        .isTrue();

    assertThat(client.serviceAccounts().inNamespace(ns).withName(fullname).get()).isNotNull();
    assertThat(client.apps().deployments().inNamespace(ns).withName(fullname).get()).isNotNull();
    assertThat(client.services().inNamespace(ns).withName(fullname).get()).isNotNull();
    assertThat(client.policy().v1().podDisruptionBudget().inNamespace(ns).withName(fullname).get())
        .isNotNull();
    assertThat(client.apps().statefulSets().inNamespace(ns).withName(fullname + "-redis").get())
        .isNotNull();
    assertThat(client.services().inNamespace(ns).withName(fullname + "-redis").get()).isNotNull();
    assertThat(client.rbac().clusterRoles().withName(fullname).get().getRules())
        .as("the operator's ClusterRole")
        .isNotEmpty();
    assertThat(client.rbac().clusterRoleBindings().withName(fullname).get().getSubjects())
        .singleElement()
        .satisfies(
            s -> assertThat(s.getNamespace() + "/" + s.getName()).isEqualTo(ns + "/" + fullname));
    assertThat(client.rbac().clusterRoles().withName(fullname + "-edit").get()).isNotNull();
    assertThat(client.rbac().clusterRoles().withName(fullname + "-view").get()).isNotNull();
    Role lease =
        client.rbac().roles().inNamespace(ns).withName(fullname + "-leader-election").get();
    assertThat(Rbac.grants(lease.getRules()))
        .containsExactlyInAnyOrderElementsOf(Rbac.leaderElection(fullname));
    assertThat(
            client
                .rbac()
                .roleBindings()
                .inNamespace(ns)
                .withName(fullname + "-leader-election")
                .get())
        .isNotNull();
    assertThat(release.operatorEnvironment("pod")).doesNotContainKey(OperatorConfig.NAMESPACES);
    for (String policy : List.of(fullname + "-author-rights", fullname + "-status-writer")) {
      assertThat(
              client
                  .admissionRegistration()
                  .v1()
                  .validatingAdmissionPolicies()
                  .withName(policy)
                  .get())
          .as("the admission policy (AdmissionPolicyIT shows what it does)")
          .isNotNull();
      assertThat(
              client
                  .admissionRegistration()
                  .v1()
                  .validatingAdmissionPolicyBindings()
                  .withName(policy)
                  .get()
                  .getSpec()
                  .getPolicyName())
          .isEqualTo(policy);
    }
    assertThat(release.operatorEnvironment("pod").get(OperatorConfig.ADMISSION_POLICY))
        .as("the operator requires the policies it was installed with")
        .isEqualTo(fullname + "-author-rights," + fullname + "-status-writer");
    assertThat(
            Rbac.grants(
                client
                    .rbac()
                    .clusterRoles()
                    .withName(fullname + "-admission-policy")
                    .get()
                    .getRules()))
        .containsExactlyInAnyOrderElementsOf(Rbac.admissionPolicy());
  }

  /**
   * The release Secret holds the chart (the CRD in files/) and the rendered manifest (the CRD
   * again), gzipped: it must stay well inside the 1 MiB of a Secret.
   */
  @Test
  void theReleaseWithTheTemplatedCrdFitsItsSecret() {
    io.fabric8.kubernetes.api.model.Secret secret =
        client
            .secrets()
            .inNamespace(defaults.namespace())
            .withName("sh.helm.release.v1.dto.v1")
            .require();
    int bytes = java.util.Base64.getDecoder().decode(secret.getData().get("release")).length;
    System.out.printf(
        "Helm release Secret sh.helm.release.v1.dto.v1: %d bytes of data (limit %d)%n",
        bytes, SECRET_LIMIT);
    assertThat(bytes)
        .as("the release's data, of at most %d", SECRET_LIMIT)
        .isLessThan(SECRET_LIMIT / 4);
  }

  /**
   * crds.keep and crds.enabled on a server of their own: helm upgrade brings the CRD to the chart's
   * (a printer column someone removed comes back), a second release with the CRD is refused, helm
   * uninstall leaves the CRD and every DelayedTask, and with crds.keep=false uninstalling deletes
   * them.
   */
  @Test
  void helmUpgradeUpdatesTheCrdAndUninstallKeepsItUnlessCrdsKeepIsFalse() throws IOException {
    try (RealKubernetes own = RealKubernetes.startDedicatedWithoutCrds()) {
      KubernetesClient c = own.client();
      String ns = own.createNamespace("crd-life");
      ChartRelease.install(own, "life", ns, "{}");
      await().atMost(Duration.ofSeconds(30)).until(() -> established(c));
      int columns = printerColumns(c);

      RealKubernetes.Kubectl.Result older =
          own.kubectl(
              "patch",
              "crd",
              CRD,
              "--type=json",
              "-p",
              "[{\"op\":\"remove\",\"path\":\"/spec/versions/0/additionalPrinterColumns/"
                  + (columns - 1)
                  + "\"}]");
      assertThat(older.ok()).as(older.output()).isTrue();
      assertThat(printerColumns(c)).isEqualTo(columns - 1);
      ChartRelease.upgrade(own, "life", ns, "{}");
      assertThat(printerColumns(c)).as("helm upgrade applied the chart's CRD").isEqualTo(columns);

      String other = own.createNamespace("crd-other");
      org.assertj.core.api.Assertions.assertThatThrownBy(
              () -> ChartRelease.install(own, "other", other, "crds: {enabled: true}"))
          .as("the CRD belongs to release life")
          .hasMessageContaining(CRD);
      assertThat(
              ChartRelease.install(own, "other", other, "crds: {enabled: false}")
                  .release()
                  .getStatus())
          .isEqualTo("deployed");

      RealKubernetes.Kubectl.Result task =
          own.kubectl(own.kubeconfig())
              .run(
                  Duration.ofSeconds(60),
                  """
          apiVersion: delayedtask.io/v1alpha1
          kind: DelayedTask
          metadata: {name: survivor}
          spec: {runAt: "2099-01-01T00:00:00Z", suspend: true, jobTemplate: {spec: {template: {spec: {
            restartPolicy: Never, containers: [{name: c, image: busybox}]}}}}}
          """,
                  "apply",
                  "-n",
                  other,
                  "-f",
                  "-");
      assertThat(task.ok()).as(task.output()).isTrue();
      ChartRelease.uninstall(own, "life", ns);
      assertThat(c.apiextensions().v1().customResourceDefinitions().withName(CRD).get())
          .as("crds.keep: helm uninstall leaves the CRD")
          .isNotNull();
      assertThat(own.kubectl("get", "dt", "survivor", "-n", other).ok())
          .as("and every DelayedTask")
          .isTrue();

      // The kept CRD still names release life, so installing life again takes it back; an upgrade
      // to crds.keep=false takes the annotation off (an install adopting the CRD would leave it:
      // Helm's patch removes only what the release's previous manifest had).
      ChartRelease.install(own, "life", ns, "crds: {enabled: true}");
      ChartRelease.upgrade(own, "life", ns, "crds: {keep: false}");
      assertThat(
              c.apiextensions()
                  .v1()
                  .customResourceDefinitions()
                  .withName(CRD)
                  .get()
                  .getMetadata()
                  .getAnnotations())
          .doesNotContainKey("helm.sh/resource-policy");
      ChartRelease.uninstall(own, "life", ns);
      await()
          .atMost(Duration.ofSeconds(60))
          .alias("crds.keep=false: helm uninstall deletes the CRD")
          .until(
              () -> c.apiextensions().v1().customResourceDefinitions().withName(CRD).get() == null);
    }
  }

  private static boolean established(KubernetesClient c) {
    CustomResourceDefinition crd =
        c.apiextensions().v1().customResourceDefinitions().withName(CRD).get();
    return crd != null
        && crd.getStatus() != null
        && crd.getStatus().getConditions().stream()
            .anyMatch(
                cond -> cond.getType().equals("Established") && cond.getStatus().equals("True"));
  }

  private static int printerColumns(KubernetesClient c) {
    return c.apiextensions()
        .v1()
        .customResourceDefinitions()
        .withName(CRD)
        .require()
        .getSpec()
        .getVersions()
        .get(0)
        .getAdditionalPrinterColumns()
        .size();
  }

  @Test
  void watchNamespacesInstallsRolesInEachListedNamespaceAndNoOperatorClusterRole() {
    ChartRelease release = scoped;
    String ns = release.namespace();
    assertThat(release.release().getStatus()).isEqualTo("deployed");
    String fullname = release.fullname();

    assertThat(client.rbac().clusterRoles().withName(fullname).get())
        .as("no cluster-wide operator role")
        .isNull();
    assertThat(client.rbac().clusterRoleBindings().withName(fullname).get()).isNull();
    for (String watched : List.of(teamA, teamB)) {
      Role role = client.rbac().roles().inNamespace(watched).withName(fullname).get();
      assertThat(role).as("operator Role in %s", watched).isNotNull();
      assertThat(Rbac.grants(role.getRules())).containsExactlyInAnyOrderElementsOf(Rbac.OPERATOR);
      RoleBinding binding =
          client.rbac().roleBindings().inNamespace(watched).withName(fullname).get();
      assertThat(binding.getSubjects())
          .singleElement()
          .satisfies(
              s -> assertThat(s.getNamespace() + "/" + s.getName()).isEqualTo(ns + "/" + fullname));
    }
    assertThat(client.rbac().roles().inNamespace(ns).list().getItems())
        .extracting(r -> r.getMetadata().getName())
        .containsExactly(fullname + "-leader-election");
    assertThat(
            client
                .network()
                .v1()
                .networkPolicies()
                .inNamespace(ns)
                .withName(fullname + "-redis")
                .get())
        .isNotNull();
    assertThat(release.operatorEnvironment("pod"))
        .containsEntry(OperatorConfig.NAMESPACES, teamA + "," + teamB);
    io.fabric8.kubernetes.api.model.PodSpec pod =
        client
            .apps()
            .deployments()
            .inNamespace(ns)
            .withName(fullname)
            .get()
            .getSpec()
            .getTemplate()
            .getSpec();
    assertThat(pod.getContainers().get(0).getImage())
        .endsWith("@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
    assertThat(pod.getVolumes())
        .extracting(io.fabric8.kubernetes.api.model.Volume::getName)
        .contains("tmp", "truststore");
    assertThat(pod.getTopologySpreadConstraints())
        .singleElement()
        .satisfies(c -> assertThat(c.getTopologyKey()).isEqualTo("topology.kubernetes.io/zone"));
    assertThat(release.operatorEnvironment("pod"))
        .containsEntry(OperatorConfig.LOG_LEVEL, "DEBUG")
        .containsEntry(OperatorConfig.LOG_FORMAT, "json")
        .containsEntry(OperatorConfig.DEFAULT_STARTING_DEADLINE_SECONDS, "3600");
    assertThat(
            client
                .apps()
                .statefulSets()
                .inNamespace(ns)
                .withName(fullname + "-redis")
                .get()
                .getSpec()
                .getTemplate()
                .getMetadata()
                .getAnnotations())
        .containsEntry("backup.velero.io/backup-volumes", "data");
  }

  @Test
  void noRuleTheServerStoredForAnyReleaseMentionsSecrets() {
    List<PolicyRule> rules = new ArrayList<>();
    // The -addressables role has no rules of its own (the server stores none until aggregation
    // fills it).
    client
        .rbac()
        .clusterRoles()
        .withLabel("app.kubernetes.io/part-of", "delayed-task-operator")
        .list()
        .getItems()
        .forEach(r -> rules.addAll(r.getRules() == null ? List.of() : r.getRules()));
    client
        .rbac()
        .roles()
        .inAnyNamespace()
        .withLabel("app.kubernetes.io/part-of", "delayed-task-operator")
        .list()
        .getItems()
        .forEach(r -> rules.addAll(r.getRules()));
    assertThat(rules)
        .as("rules of both releases")
        .hasSizeGreaterThan(10)
        .noneMatch(Rbac::mentionsSecretsOrWildcards);
  }

  private static String readString(Path file) {
    try {
      return Files.readString(file);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
