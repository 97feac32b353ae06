package io.delayedtask.operator.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import io.delayedtask.operator.config.OperatorConfig;
import io.delayedtask.operator.config.SinkConfig;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicy;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicyBinding;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * k8s/ is what users without Helm install: it must parse, be listed in install order by the
 * kustomization, and give the operator the same security posture and permissions as the chart.
 */
class PlainManifestsTest {

  private static final String NAMESPACE = "delayed-task-operator";
  private static final String NAME = "delayed-task-operator";

  /** File name to its objects, in file-name (= install) order. */
  private static final Map<String, List<HasMetadata>> FILES = new TreeMap<>();

  private static final List<HasMetadata> ALL = new ArrayList<>();

  @BeforeAll
  static void readManifests() throws IOException {
    for (Path file : manifestFiles()) {
      List<HasMetadata> objects = Manifests.read(file);
      FILES.put(file.getFileName().toString(), objects);
      ALL.addAll(objects);
    }
  }

  @Test
  void filesAreNumberedInInstallOrderAndHoldWhatTheirNamesSay() {
    assertThat(FILES.keySet()).allMatch(name -> name.matches("[0-9]{2}-[a-z-]+\\.yaml"));
    assertThat(FILES)
        .hasEntrySatisfying("00-namespace.yaml", kinds("Namespace"))
        .hasEntrySatisfying("10-crd.yaml", kinds("CustomResourceDefinition"))
        .hasEntrySatisfying("11-queue-crd.yaml", kinds("CustomResourceDefinition"))
        .hasEntrySatisfying(
            "15-admission-policy.yaml",
            kinds(
                "ValidatingAdmissionPolicy",
                "ValidatingAdmissionPolicyBinding",
                "ValidatingAdmissionPolicy",
                "ValidatingAdmissionPolicyBinding"))
        .hasEntrySatisfying("20-serviceaccount.yaml", kinds("ServiceAccount"))
        .hasEntrySatisfying(
            "30-rbac.yaml",
            kinds(
                "ClusterRole",
                "ClusterRoleBinding",
                "ClusterRole",
                "ClusterRoleBinding",
                "Role",
                "RoleBinding",
                "ClusterRole",
                "ClusterRole",
                "ClusterRole",
                "ClusterRoleBinding"))
        .hasEntrySatisfying("40-config.yaml", kinds("ConfigMap"))
        .hasEntrySatisfying("50-redis.yaml", kinds("Service", "StatefulSet", "NetworkPolicy"))
        .hasEntrySatisfying("60-deployment.yaml", kinds("Deployment", "PodDisruptionBudget"))
        .hasEntrySatisfying("70-service.yaml", kinds("Service"));
    assertThat(FILES).hasSize(10);
  }

  @Test
  void kustomizationListsEveryManifestInOrder() throws IOException {
    Map<String, Object> kustomization =
        new KubernetesSerialization()
            .unmarshal(Files.readString(Manifests.PLAIN.resolve("kustomization.yaml")), Map.class);
    assertThat(kustomization.get("resources")).asList().containsExactlyElementsOf(FILES.keySet());
  }

  @Test
  void everythingNamespacedLivesInTheOperatorNamespace() {
    assertThat(Manifests.one(ALL, Namespace.class).getMetadata().getName()).isEqualTo(NAMESPACE);
    assertThat(ALL)
        .filteredOn(
            o ->
                !List.of(
                        "Namespace",
                        "CustomResourceDefinition",
                        "ClusterRole",
                        "ClusterRoleBinding",
                        "ValidatingAdmissionPolicy",
                        "ValidatingAdmissionPolicyBinding")
                    .contains(o.getKind()))
        .allSatisfy(
            o -> assertThat(o.getMetadata().getNamespace()).as(o.getKind()).isEqualTo(NAMESPACE));
    assertThat(Manifests.one(ALL, Namespace.class).getMetadata().getLabels())
        .containsEntry("pod-security.kubernetes.io/enforce", "restricted");
  }

  @Test
  void deploymentHasTheChartsSecurityPostureProbesAndResources() {
    PodSpec plain = Manifests.one(ALL, Deployment.class).getSpec().getTemplate().getSpec();
    RestrictedPodSecurity.assertRestricted(plain, "k8s/ operator");
    RestrictedPodSecurity.assertWritableTmp(plain, "k8s/ operator");

    RenderedChart chart = RenderedChart.render("{}");
    PodSpec charted = chart.one(Deployment.class).getSpec().getTemplate().getSpec();
    assertThat(plain.getSecurityContext()).isEqualTo(charted.getSecurityContext());
    Container plainContainer = plain.getContainers().get(0);
    Container chartContainer = charted.getContainers().get(0);
    assertThat(plainContainer.getSecurityContext()).isEqualTo(chartContainer.getSecurityContext());
    assertThat(plainContainer.getLivenessProbe()).isEqualTo(chartContainer.getLivenessProbe());
    assertThat(plainContainer.getReadinessProbe()).isEqualTo(chartContainer.getReadinessProbe());
    assertThat(plainContainer.getPorts()).isEqualTo(chartContainer.getPorts());
    assertThat(plainContainer.getResources()).isEqualTo(chartContainer.getResources());
    assertThat(plain.getTopologySpreadConstraints()).hasSize(1);
    assertThat(Manifests.one(ALL, Deployment.class).getSpec().getReplicas()).isEqualTo(2);
    assertThat(Manifests.one(ALL, PodDisruptionBudget.class).getSpec().getSelector())
        .isEqualTo(Manifests.one(ALL, Deployment.class).getSpec().getSelector());
  }

  @Test
  void rbacMatchesTheChartsAndNeverMentionsSecrets() {
    assertThat(config().get(SinkConfig.SERVICE_ACCOUNT)).isEqualTo(Rbac.SENDER);
    assertThat(Rbac.grants(Manifests.named(ALL, ClusterRole.class, NAME).getRules()))
        .as("tokens of the ServiceAccount 40-config names, and only of it")
        .containsExactlyInAnyOrderElementsOf(
            Rbac.operator(config().get(SinkConfig.SERVICE_ACCOUNT)));
    assertThat(Rbac.grants(Manifests.named(ALL, ClusterRole.class, NAME + "-edit").getRules()))
        .containsExactlyInAnyOrderElementsOf(Rbac.USER_EDIT);
    assertThat(Manifests.named(ALL, ClusterRole.class, NAME + "-edit").getMetadata().getLabels())
        .containsEntry("rbac.authorization.k8s.io/aggregate-to-admin", "true")
        .containsEntry("rbac.authorization.k8s.io/aggregate-to-edit", "true");
    assertThat(Rbac.grants(Manifests.named(ALL, ClusterRole.class, NAME + "-view").getRules()))
        .containsExactlyInAnyOrderElementsOf(Rbac.USER_VIEW);
    assertThat(Manifests.named(ALL, ClusterRole.class, NAME + "-view").getMetadata().getLabels())
        .containsEntry("rbac.authorization.k8s.io/aggregate-to-view", "true");

    Role lease = Manifests.one(ALL, Role.class);
    assertThat(lease.getMetadata().getNamespace()).isEqualTo(NAMESPACE);
    String leaseName = config().get(OperatorConfig.LEASE_NAME);
    assertThat(Rbac.grants(lease.getRules()))
        .containsExactlyInAnyOrderElementsOf(Rbac.leaderElection(leaseName));

    String serviceAccount =
        Manifests.one(ALL, Deployment.class)
            .getSpec()
            .getTemplate()
            .getSpec()
            .getServiceAccountName();
    ClusterRole addressables = Manifests.named(ALL, ClusterRole.class, NAME + "-addressables");
    assertThat(addressables.getRules()).as("filled by aggregation").isEmpty();
    assertThat(addressables.getAggregationRule().getClusterRoleSelectors())
        .singleElement()
        .satisfies(
            selector ->
                assertThat(selector.getMatchLabels())
                    .containsExactlyEntriesOf(Map.of("duck.knative.dev/addressable", "true")));
    assertThat(
            Rbac.grants(
                Manifests.named(ALL, ClusterRole.class, NAME + "-admission-policy").getRules()))
        .containsExactlyInAnyOrderElementsOf(Rbac.admissionPolicy());
    assertThat(Manifests.all(ALL, ClusterRoleBinding.class))
        .hasSize(3)
        .allSatisfy(
            binding -> {
              assertThat(binding.getRoleRef().getName()).isEqualTo(binding.getMetadata().getName());
              assertThat(binding.getSubjects())
                  .singleElement()
                  .satisfies(
                      s -> {
                        assertThat(s.getName()).isEqualTo(serviceAccount);
                        assertThat(s.getNamespace()).isEqualTo(NAMESPACE);
                      });
            });
    assertThat(Manifests.one(ALL, RoleBinding.class).getSubjects())
        .singleElement()
        .satisfies(s -> assertThat(s.getName()).isEqualTo(serviceAccount));

    List<PolicyRule> rules = new ArrayList<>();
    Manifests.all(ALL, ClusterRole.class).forEach(r -> rules.addAll(r.getRules()));
    Manifests.all(ALL, Role.class).forEach(r -> rules.addAll(r.getRules()));
    assertThat(rules).noneMatch(Rbac::mentionsSecretsOrWildcards);
  }

  @Test
  void configurationIsAcceptedByTheOperatorAndPointsAtTheBundledRedis() {
    Deployment deployment = Manifests.one(ALL, Deployment.class);
    Container container = deployment.getSpec().getTemplate().getSpec().getContainers().get(0);
    assertThat(container.getEnvFrom())
        .singleElement()
        .satisfies(
            from ->
                assertThat(from.getConfigMapRef().getName())
                    .isEqualTo(Manifests.one(ALL, ConfigMap.class).getMetadata().getName()));
    assertThat(config().keySet())
        .filteredOn(k -> k.startsWith("DELAYEDTASK_"))
        .isSubsetOf(PodEnvironment.contractVariables());
    assertThat(config()).doesNotContainKey(OperatorConfig.REDIS_PASSWORD);
    assertThat(container.getEnv())
        .filteredOn(e -> e.getName().equals(OperatorConfig.REDIS_PASSWORD))
        .singleElement()
        .satisfies(
            e -> {
              assertThat(e.getValueFrom().getSecretKeyRef().getName()).isEqualTo(NAME + "-redis");
              assertThat(e.getValueFrom().getSecretKeyRef().getKey()).isEqualTo("password");
            });

    OperatorConfig parsed =
        OperatorConfig.fromEnv(
            PodEnvironment.resolve(
                config(), container.getEnv(), NAMESPACE, "delayed-task-operator-5c7d-xyz12"));
    assertThat(parsed.leaseNamespace()).isEqualTo(NAMESPACE);
    assertThat(parsed.identity()).isEqualTo("delayed-task-operator-5c7d-xyz12");
    assertThat(parsed.watchesAllNamespaces()).as("matches the ClusterRole").isTrue();
    assertThat(parsed.leaderElection()).isTrue();
    assertThat(parsed.leaseDuration())
        .as("the default lease")
        .isEqualTo(java.time.Duration.ofSeconds(4));
    assertThat(parsed.claimLease()).isEqualTo(java.time.Duration.ofSeconds(60));

    Service redis = Manifests.named(ALL, Service.class, NAME + "-redis");
    assertThat(parsed.redisUri())
        .isEqualTo("redis://" + redis.getMetadata().getName() + "." + NAMESPACE + ".svc:6379");
  }

  @Test
  void sinkSettingsAreTheChartsDefaults() {
    Map<String, EnvVar> chart = RenderedChart.render("{}").operatorEnv();
    for (String variable :
        List.of(
            SinkConfig.CLUSTER_DOMAIN,
            SinkConfig.SERVICE_ACCOUNT,
            SinkConfig.MAX_IN_FLIGHT,
            SinkConfig.MAX_IN_FLIGHT_PER_HOST,
            SinkConfig.MAX_IN_FLIGHT_PER_NAMESPACE)) {
      assertThat(config().get(variable)).as(variable).isEqualTo(chart.get(variable).getValue());
    }
    assertThat(config().get(SinkConfig.ALLOWED_URIS))
        .as("no absolute sink URI allowed, as in the chart")
        .isEmpty();
    assertThat(chart).doesNotContainKey(SinkConfig.ALLOWED_URIS);
  }

  @Test
  void admissionPoliciesAreTheChartsUnderTheOperatorsNameAndTheOperatorRequiresBoth() {
    RenderedChart chart = RenderedChart.render("{}");
    for (String suffix : List.of("-author-rights", "-status-writer")) {
      ValidatingAdmissionPolicy plain =
          Manifests.named(ALL, ValidatingAdmissionPolicy.class, NAME + suffix);
      ValidatingAdmissionPolicy charted =
          chart.named(ValidatingAdmissionPolicy.class, RenderedChart.FULLNAME + suffix);
      if (suffix.equals("-status-writer")) {
        assertThat(plain.getSpec().getVariables().get(0).getExpression())
            .as("the operator's ServiceAccount of 20-serviceaccount.yaml")
            .isEqualTo("'system:serviceaccount:" + NAMESPACE + ":" + NAME + "'");
        charted
            .getSpec()
            .getVariables()
            .get(0)
            .setExpression(plain.getSpec().getVariables().get(0).getExpression());
      }
      assertThat(plain.getSpec()).as(suffix).isEqualTo(charted.getSpec());

      ValidatingAdmissionPolicyBinding binding =
          Manifests.named(ALL, ValidatingAdmissionPolicyBinding.class, NAME + suffix);
      assertThat(binding.getSpec().getPolicyName()).isEqualTo(plain.getMetadata().getName());
      ValidatingAdmissionPolicyBinding chartBinding =
          chart.named(ValidatingAdmissionPolicyBinding.class, RenderedChart.FULLNAME + suffix);
      chartBinding.getSpec().setPolicyName(plain.getMetadata().getName());
      assertThat(binding.getSpec()).isEqualTo(chartBinding.getSpec());
    }
    assertThat(config().get(OperatorConfig.ADMISSION_POLICY))
        .isEqualTo(NAME + "-author-rights," + NAME + "-status-writer")
        .as("the operator's default names the plain manifests' bindings")
        .isEqualTo(String.join(",", OperatorConfig.fromEnv(Map.of()).admissionPolicyBindings()));
  }

  @Test
  void bundledRedisIsRestrictedAppendOnlyAndReachableOnlyByTheOperator() {
    StatefulSet redis = Manifests.one(ALL, StatefulSet.class);
    PodSpec pod = redis.getSpec().getTemplate().getSpec();
    RestrictedPodSecurity.assertRestricted(pod, "k8s/ redis");
    assertThat(String.join(" ", pod.getContainers().get(0).getArgs())).contains("--appendonly yes");
    assertThat(redis.getSpec().getVolumeClaimTemplates()).hasSize(1);
    Map<String, String> redisPods = redis.getSpec().getTemplate().getMetadata().getLabels();
    assertThat(Manifests.named(ALL, Service.class, NAME + "-redis").getSpec().getSelector())
        .isEqualTo(redisPods);

    NetworkPolicy policy = Manifests.one(ALL, NetworkPolicy.class);
    assertThat(policy.getSpec().getPodSelector().getMatchLabels()).isEqualTo(redisPods);
    assertThat(policy.getSpec().getIngress())
        .singleElement()
        .satisfies(
            rule ->
                assertThat(rule.getFrom())
                    .singleElement()
                    .satisfies(
                        peer ->
                            assertThat(peer.getPodSelector().getMatchLabels())
                                .isEqualTo(
                                    Manifests.one(ALL, Deployment.class)
                                        .getSpec()
                                        .getSelector()
                                        .getMatchLabels())));

    var container = pod.getContainers().get(0);
    Container chartRedis =
        RenderedChart.render("{}")
            .one(StatefulSet.class)
            .getSpec()
            .getTemplate()
            .getSpec()
            .getContainers()
            .get(0);
    assertThat(container.getImage())
        .as("k8s/ runs the chart's pinned Redis, never a floating tag")
        .isEqualTo(chartRedis.getImage());
    assertThat(String.join(" ", container.getArgs())).contains("--requirepass $(REDIS_PASSWORD)");
    assertThat(container.getEnv())
        .extracting(EnvVar::getName)
        .containsExactlyInAnyOrder("REDIS_PASSWORD", "REDISCLI_AUTH");
    assertThat(container.getEnv())
        .allSatisfy(
            e -> {
              assertThat(e.getValueFrom().getSecretKeyRef().getName()).isEqualTo(NAME + "-redis");
              assertThat(e.getValueFrom().getSecretKeyRef().getKey()).isEqualTo("password");
            });
  }

  @Test
  void theRedisSecretIsOneDocumentedCommandNeverAManifest() throws IOException {
    assertThat(ALL).noneMatch(o -> o.getKind().equals("Secret"));
    String command =
        "kubectl -n "
            + NAMESPACE
            + " create secret generic "
            + NAME
            + "-redis --from-literal=password=";
    assertThat(Files.readString(Manifests.PLAIN.resolve("50-redis.yaml"))).contains(command);
    assertThat(Files.readString(Path.of("docs", "install.md"))).contains(command);
  }

  @Test
  void metricsServiceSelectsTheOperatorPods() {
    Service metrics = Manifests.named(ALL, Service.class, NAME);
    assertThat(metrics.getSpec().getSelector())
        .isEqualTo(Manifests.one(ALL, Deployment.class).getSpec().getSelector().getMatchLabels());
    assertThat(metrics.getSpec().getPorts())
        .singleElement()
        .satisfies(p -> assertThat(p.getTargetPort().getStrVal()).isEqualTo("http"));
  }

  private static Map<String, String> config() {
    return Manifests.one(ALL, ConfigMap.class).getData();
  }

  private static java.util.function.Consumer<List<HasMetadata>> kinds(String... expected) {
    return objects ->
        assertThat(objects).extracting(HasMetadata::getKind).containsExactlyInAnyOrder(expected);
  }

  private static List<Path> manifestFiles() throws IOException {
    try (Stream<Path> files = Files.list(Manifests.PLAIN)) {
      return files
          .filter(Files::isRegularFile)
          .filter(p -> !p.getFileName().toString().equals("kustomization.yaml"))
          .sorted()
          .toList();
    }
  }
}
