package io.delayedtask.operator.deploy;

import static io.delayedtask.operator.deploy.RenderedChart.FULLNAME;
import static io.delayedtask.operator.deploy.RenderedChart.NAMESPACE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.marcnuri.helm.DryRun;
import com.marcnuri.helm.Helm;
import com.marcnuri.helm.LintResult;
import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.config.OperatorConfig;
import io.delayedtask.operator.config.SinkConfig;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Probe;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicy;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicyBinding;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.fabric8.kubernetes.api.model.rbac.Subject;
import java.io.IOException;
import java.nio.file.Files;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Renders the chart with Helm's engine for the default values and for each option, and checks what
 * a platform engineer relies on: the restricted security context, probes, least-privilege RBAC, the
 * Lease role's namespace, the Redis wiring, and that nothing can read Secrets.
 */
class HelmChartTest {

  private static final String REDIS = FULLNAME + "-redis";
  private static final String POLICY = FULLNAME + "-author-rights";
  private static final String STATUS_POLICY = FULLNAME + "-status-writer";
  private static final Map<String, String> OPERATOR_POD =
      Map.of(
          "app.kubernetes.io/name", "delayed-task-operator",
          "app.kubernetes.io/instance", RenderedChart.RELEASE,
          "app.kubernetes.io/component", "operator");

  private static RenderedChart defaults;

  @BeforeAll
  static void renderDefaults() {
    defaults = RenderedChart.render("{}");
  }

  @Test
  void lintsCleanInStrictMode() {
    LintResult result = new Helm(Manifests.CHART).lint().strict().call();
    assertThat(result.isFailed()).as("helm lint --strict: %s", result.getMessages()).isFalse();
    assertThat(result.getMessages())
        .noneMatch(m -> m.startsWith("[ERROR]") || m.startsWith("[WARNING]"));
  }

  @Test
  void kubernetesOlderThanTheOldestClaimedIsRefusedAndVendorBuildsOfItAreNot() {
    assertThat(Manifests.CHART.resolve("Chart.yaml"))
        .content()
        .contains("kubeVersion: \">=1.30.0-0\"");
    for (String old : List.of("v1.29.9", "v1.29.15-eks-0a21954", "v1.20.0")) {
      assertThatThrownBy(() -> RenderedChart.template("{}", old))
          .as("Kubernetes %s", old)
          .hasMessageContaining(
              "chart requires kubeVersion: >=1.30.0-0 which is incompatible with Kubernetes "
                  + old.replaceFirst(
                      "-.*", "")); // Helm prints the version without the vendor's suffix
    }
    for (String supported :
        List.of("v1.30.0", "v1.30.4-eks-a737599", "v1.31.1-gke.1146000", "v1.37.2")) {
      assertThat(Manifests.parse(RenderedChart.template("{}", supported)))
          .as("Kubernetes %s", supported)
          .extracting(HasMetadata::getKind)
          .contains("Deployment", "ValidatingAdmissionPolicy");
    }
  }

  @Test
  void defaultsRenderTheOperatorWithBundledRedisAndNothingOptional() {
    assertThat(defaults.objects())
        .extracting(o -> o.getKind() + "/" + o.getMetadata().getName())
        .containsExactlyInAnyOrder(
            "ServiceAccount/" + FULLNAME,
            "ClusterRole/" + FULLNAME,
            "ClusterRoleBinding/" + FULLNAME,
            "ClusterRole/" + FULLNAME + "-addressables",
            "ClusterRoleBinding/" + FULLNAME + "-addressables",
            "ClusterRole/" + FULLNAME + "-admission-policy",
            "ClusterRoleBinding/" + FULLNAME + "-admission-policy",
            "ClusterRole/" + FULLNAME + "-edit",
            "ClusterRole/" + FULLNAME + "-view",
            "Role/" + FULLNAME + "-leader-election",
            "RoleBinding/" + FULLNAME + "-leader-election",
            "Deployment/" + FULLNAME,
            "PodDisruptionBudget/" + FULLNAME,
            "Service/" + FULLNAME,
            "StatefulSet/" + REDIS,
            "Service/" + REDIS,
            "NetworkPolicy/" + REDIS,
            "ValidatingAdmissionPolicy/" + POLICY,
            "ValidatingAdmissionPolicyBinding/" + POLICY,
            "ValidatingAdmissionPolicy/" + STATUS_POLICY,
            "ValidatingAdmissionPolicyBinding/" + STATUS_POLICY,
            "CustomResourceDefinition/delayedtasks.delayedtask.io",
            "CustomResourceDefinition/delayedtaskqueues.delayedtask.io");
    assertThat(defaults.objects())
        .filteredOn(
            o ->
                !o.getKind().startsWith("Cluster")
                    && !o.getKind().startsWith("ValidatingAdmissionPolicy")
                    && !o.getKind().equals("CustomResourceDefinition"))
        .allSatisfy(
            o -> assertThat(o.getMetadata().getNamespace()).as(o.getKind()).isEqualTo(NAMESPACE));
  }

  /**
   * crds.enabled (default true) templates the CRD, so that helm upgrade updates it; its schema is
   * the committed crds/ one unchanged, only metadata gets the chart's labels and, with crds.keep
   * (default true), helm.sh/resource-policy: keep, which helm uninstall honours.
   */
  @Test
  void defaultsTemplateTheCommittedCrdsWithTheChartLabelsAndKeptOnUninstall() throws Exception {
    assertThat(defaults.all(CustomResourceDefinition.class)).hasSize(CRDS.size());
    for (String crd : CRDS) {
      CustomResourceDefinition rendered = crd(defaults, crd);
      assertThat(rendered.getMetadata().getAnnotations())
          .containsExactly(Map.entry("helm.sh/resource-policy", "keep"));
      assertThat(rendered.getMetadata().getLabels())
          .containsEntry("app.kubernetes.io/managed-by", "Helm")
          .containsEntry("app.kubernetes.io/instance", RenderedChart.RELEASE)
          .containsEntry("app.kubernetes.io/part-of", "delayed-task-operator");
      assertThat(withoutChartMetadata(rendered))
          .as("the CRD of crds/, whatever the chart adds to metadata")
          .isEqualTo(committedCrd(crd));
    }
  }

  @Test
  void crdsKeepFalseLeavesTheCrdsToHelmUninstall() throws Exception {
    RenderedChart notKept = RenderedChart.render("crds: {keep: false}");
    for (String crd : CRDS) {
      CustomResourceDefinition rendered = crd(notKept, crd);
      assertThat(rendered.getMetadata().getAnnotations()).isNullOrEmpty();
      assertThat(rendered.getMetadata().getLabels())
          .containsEntry("app.kubernetes.io/instance", RenderedChart.RELEASE);
      assertThat(withoutChartMetadata(rendered)).isEqualTo(committedCrd(crd));
    }
  }

  @Test
  void crdsEnabledFalseRendersNoCrdAndEverythingElse() {
    RenderedChart without = RenderedChart.render("crds: {enabled: false}");
    assertThat(without.all(CustomResourceDefinition.class)).isEmpty();
    assertThat(without.objects()).hasSize(defaults.objects().size() - CRDS.size());
  }

  @Test
  void crdsRefusesAnUnknownSwitch() {
    assertThatThrownBy(() -> RenderedChart.render("crds: {install: true}"))
        .hasMessageContaining("install");
    assertThatThrownBy(() -> RenderedChart.render("crds: {keep: \"yes\"}"))
        .hasMessageContaining("keep");
  }

  /** The CRDs the chart templates, by name; each committed in crds/ as {@code <name>-v1.yml}. */
  private static final java.util.List<String> CRDS =
      java.util.List.of("delayedtasks.delayedtask.io", "delayedtaskqueues.delayedtask.io");

  private static CustomResourceDefinition crd(RenderedChart chart, String name) {
    return chart.all(CustomResourceDefinition.class).stream()
        .filter(c -> c.getMetadata().getName().equals(name))
        .findFirst()
        .orElseThrow(() -> new AssertionError("the chart renders no CRD " + name));
  }

  private static CustomResourceDefinition committedCrd(String name) throws Exception {
    CustomResourceDefinition committed =
        Manifests.one(
            Manifests.read(java.nio.file.Path.of("crds", name + "-v1.yml")),
            CustomResourceDefinition.class);
    assertThat(committed.getMetadata().getLabels()).isNullOrEmpty();
    assertThat(committed.getMetadata().getAnnotations()).isNullOrEmpty();
    return withoutChartMetadata(committed);
  }

  private static CustomResourceDefinition withoutChartMetadata(CustomResourceDefinition crd) {
    CustomResourceDefinition copy = Manifests.SERIALIZATION.clone(crd);
    copy.getMetadata().setLabels(null);
    copy.getMetadata().setAnnotations(null);
    return copy;
  }

  @Test
  void operatorPodsAreRestrictedWithAWritableTmp() {
    PodSpec pod = defaults.one(Deployment.class).getSpec().getTemplate().getSpec();
    RestrictedPodSecurity.assertRestricted(pod, "operator");
    RestrictedPodSecurity.assertWritableTmp(pod, "operator");
    assertThat(pod.getSecurityContext().getRunAsUser())
        .as("the Dockerfile's user")
        .isEqualTo(10001L);
    assertThat(defaults.operatorContainer().getResources().getLimits())
        .containsKeys("cpu", "memory");
  }

  @Test
  void operatorRunsTwoLeaderElectedReplicasSpreadOverNodesWithADisruptionBudget() {
    Deployment deployment = defaults.one(Deployment.class);
    assertThat(deployment.getSpec().getReplicas()).isEqualTo(2);
    assertThat(deployment.getSpec().getSelector().getMatchLabels()).isEqualTo(OPERATOR_POD);
    assertThat(deployment.getSpec().getTemplate().getMetadata().getLabels())
        .containsAllEntriesOf(OPERATOR_POD);
    assertThat(defaults.operatorEnv().get(OperatorConfig.LEADER_ELECTION).getValue())
        .isEqualTo("true");

    PodSpec pod = deployment.getSpec().getTemplate().getSpec();
    assertThat(pod.getTopologySpreadConstraints())
        .singleElement()
        .satisfies(
            spread -> {
              assertThat(spread.getTopologyKey()).isEqualTo("kubernetes.io/hostname");
              assertThat(spread.getLabelSelector().getMatchLabels()).isEqualTo(OPERATOR_POD);
            });
    PodDisruptionBudget budget = defaults.one(PodDisruptionBudget.class);
    assertThat(budget.getSpec().getSelector().getMatchLabels()).isEqualTo(OPERATOR_POD);
    assertThat(budget.getSpec().getMaxUnavailable().getIntVal()).isEqualTo(1);
    assertThat(pod.getServiceAccountName())
        .isEqualTo(defaults.one(ServiceAccount.class).getMetadata().getName());
  }

  @Test
  void probesHitHealthzAndReadyzOnTheNamedHttpPort() {
    Container container = defaults.operatorContainer();
    assertThat(container.getPorts())
        .singleElement()
        .satisfies(
            port -> {
              assertThat(port.getName()).isEqualTo("http");
              assertThat(port.getContainerPort()).isEqualTo(8080);
            });
    assertHttpProbe(container.getLivenessProbe(), "/healthz");
    assertHttpProbe(container.getReadinessProbe(), "/readyz");
    assertThat(defaults.operatorEnv().get(OperatorConfig.HTTP_PORT).getValue()).isEqualTo("8080");

    Service metrics = defaults.named(Service.class, FULLNAME);
    assertThat(metrics.getSpec().getSelector()).isEqualTo(OPERATOR_POD);
    assertThat(metrics.getSpec().getPorts())
        .singleElement()
        .satisfies(port -> assertThat(port.getTargetPort().getStrVal()).isEqualTo("http"));
  }

  @Test
  void environmentFollowsTheContractAndIsAcceptedByTheOperatorConfig() {
    Map<String, EnvVar> env = defaults.operatorEnv();
    assertThat(env.get("POD_NAMESPACE").getValueFrom().getFieldRef().getFieldPath())
        .isEqualTo("metadata.namespace");
    assertThat(env.get(OperatorConfig.IDENTITY).getValueFrom().getFieldRef().getFieldPath())
        .isEqualTo("metadata.name");
    assertThat(env.get(OperatorConfig.LEASE_NAME).getValue()).isEqualTo(FULLNAME);
    assertThat(env).doesNotContainKeys(OperatorConfig.NAMESPACES, OperatorConfig.LEASE_NAMESPACE);
    assertThat(env.get(OperatorConfig.REDIS_PASSWORD).getValueFrom().getSecretKeyRef().getName())
        .as("the bundled Redis' generated password")
        .isEqualTo(REDIS + "-auth");
    assertThat(env.get("JDK_JAVA_OPTIONS").getValue())
        .contains("-XX:MaxRAMPercentage=", "-XX:+ExitOnOutOfMemoryError");
    assertThat(env.keySet())
        .filteredOn(name -> name.startsWith("DELAYEDTASK_"))
        .as("only variables the operator reads")
        .isSubsetOf(PodEnvironment.contractVariables());

    OperatorConfig config =
        OperatorConfig.fromEnv(asPodWouldSee(env, "dto-delayed-task-operator-7d9f-abcde"));
    assertThat(config.leaseNamespace())
        .as("lease namespace defaults to the pod's")
        .isEqualTo(NAMESPACE);
    assertThat(config.identity()).isEqualTo("dto-delayed-task-operator-7d9f-abcde");
    assertThat(config.watchesAllNamespaces()).isTrue();
    assertThat(config.leaderElection()).isTrue();
    assertThat(env.get(OperatorConfig.LEASE_DURATION_SECONDS).getValue())
        .isEqualTo(Integer.toString(OperatorConfig.DEFAULT_LEASE_SECONDS));
    assertThat(env.get(OperatorConfig.CLAIM_LEASE_SECONDS).getValue()).isEqualTo("60");
    assertThat(config.leaseDuration())
        .isEqualTo(java.time.Duration.ofSeconds(OperatorConfig.DEFAULT_LEASE_SECONDS));
    assertThat(config.claimLease()).isEqualTo(java.time.Duration.ofSeconds(60));
  }

  @Test
  void tracingIsOffByDefaultAndOtelValuesBecomeOpenTelemetrysOwnVariables() {
    assertThat(defaults.operatorEnv().keySet()).noneMatch(name -> name.startsWith("OTEL_"));

    Map<String, EnvVar> env =
        RenderedChart.render(
                """
        otel:
          endpoint: http://otel-collector.observability:4318
          headersSecret: {name: otel-auth, key: headers}
          sampler: parentbased_traceidratio
          samplerArg: "0.25"
        """)
            .operatorEnv();

    assertThat(env.get("OTEL_EXPORTER_OTLP_ENDPOINT").getValue())
        .isEqualTo("http://otel-collector.observability:4318");
    assertThat(env.get("OTEL_SERVICE_NAME").getValue()).isEqualTo("delayed-task-operator");
    assertThat(env.get("OTEL_TRACES_SAMPLER").getValue()).isEqualTo("parentbased_traceidratio");
    assertThat(env.get("OTEL_TRACES_SAMPLER_ARG").getValue()).isEqualTo("0.25");
    assertThat(env.get("OTEL_EXPORTER_OTLP_HEADERS").getValue())
        .as("from the Secret, never in values")
        .isNull();
    assertThat(env.get("OTEL_EXPORTER_OTLP_HEADERS").getValueFrom().getSecretKeyRef().getName())
        .isEqualTo("otel-auth");
    assertThat(env.get("OTEL_EXPORTER_OTLP_HEADERS").getValueFrom().getSecretKeyRef().getKey())
        .isEqualTo("headers");
  }

  @Test
  void leaseTimingReachesTheOperatorFromValues() {
    RenderedChart chart =
        RenderedChart.render(
            """
        leaderElection:
          leaseDurationSeconds: 30
        claimLeaseSeconds: 180
        """);
    OperatorConfig config = OperatorConfig.fromEnv(asPodWouldSee(chart.operatorEnv(), "pod"));
    assertThat(config.leaseDuration()).isEqualTo(java.time.Duration.ofSeconds(30));
    assertThat(config.leaseRenewDeadline()).isEqualTo(java.time.Duration.ofSeconds(20));
    assertThat(config.claimLease()).isEqualTo(java.time.Duration.ofSeconds(180));
  }

  @Test
  void finishedTtlSecondsReachesTheOperatorOnlyWhenSet() {
    assertThat(defaults.operatorEnv())
        .as("finished tasks kept by default")
        .doesNotContainKey(OperatorConfig.FINISHED_TTL_SECONDS);
    for (String seconds : List.of("0", "86400")) {
      RenderedChart chart = RenderedChart.render("finishedTtlSeconds: " + seconds + "\n");
      assertThat(chart.operatorEnv().get(OperatorConfig.FINISHED_TTL_SECONDS).getValue())
          .isEqualTo(seconds);
      assertThat(
              OperatorConfig.fromEnv(Map.of(OperatorConfig.FINISHED_TTL_SECONDS, seconds))
                  .finishedTtl())
          .contains(java.time.Duration.ofSeconds(Long.parseLong(seconds)));
    }
    for (String bad : List.of("-1", "1.5", "'600'")) {
      assertThatThrownBy(() -> RenderedChart.template("finishedTtlSeconds: " + bad))
          .as("finishedTtlSeconds: %s", bad)
          .hasMessageContaining("finishedTtlSeconds");
    }
  }

  @Test
  void operatorClusterRoleGrantsExactlyWhatTheOperatorUses() {
    ClusterRole role = defaults.named(ClusterRole.class, FULLNAME);
    assertThat(Rbac.grants(role.getRules()))
        .as("what RbacFromAuditLogIT saw the operator ask for: %s", Rbac.USED)
        .containsExactlyInAnyOrderElementsOf(Rbac.OPERATOR);
    ClusterRoleBinding binding = defaults.named(ClusterRoleBinding.class, FULLNAME);
    assertThat(binding.getRoleRef().getName()).isEqualTo(FULLNAME);
    assertBoundToOperatorServiceAccount(binding.getSubjects());
    ClusterRole addressables = defaults.named(ClusterRole.class, FULLNAME + "-addressables");
    assertThat(addressables.getRules()).as("filled by aggregation").isEmpty();
    assertThat(addressables.getAggregationRule().getClusterRoleSelectors())
        .singleElement()
        .satisfies(
            selector ->
                assertThat(selector.getMatchLabels())
                    .containsExactlyEntriesOf(Map.of("duck.knative.dev/addressable", "true")));
    ClusterRoleBinding toAddressables =
        defaults.named(ClusterRoleBinding.class, FULLNAME + "-addressables");
    assertThat(toAddressables.getRoleRef().getName()).isEqualTo(FULLNAME + "-addressables");
    assertBoundToOperatorServiceAccount(toAddressables.getSubjects());
    assertThat(
            Rbac.grants(
                defaults.named(ClusterRole.class, FULLNAME + "-admission-policy").getRules()))
        .as("list and watch of the admission policies (two informers): %s", Rbac.USED)
        .containsExactlyInAnyOrderElementsOf(Rbac.admissionPolicy());
    ClusterRoleBinding policyBinding =
        defaults.named(ClusterRoleBinding.class, FULLNAME + "-admission-policy");
    assertThat(policyBinding.getRoleRef().getName()).isEqualTo(FULLNAME + "-admission-policy");
    assertBoundToOperatorServiceAccount(policyBinding.getSubjects());
    assertThat(
            RenderedChart.render("admissionPolicy: {requiredBindings: none}")
                .all(ClusterRole.class))
        .as("no check, no grant")
        .noneMatch(r -> r.getMetadata().getName().endsWith("-admission-policy"));
    assertThat(defaults.all(Role.class))
        .as("no namespaced operator Roles when watching all namespaces")
        .extracting(r -> r.getMetadata().getName())
        .containsExactly(FULLNAME + "-leader-election");
  }

  @Test
  void sinkSettingsReachTheOperatorWithTheCodesDefaults() {
    Map<String, EnvVar> env = defaults.operatorEnv();
    SinkConfig code = SinkConfig.defaults();
    assertThat(env)
        .as("no absolute sink URI allowed by default")
        .doesNotContainKey(SinkConfig.ALLOWED_URIS);
    assertThat(env.get(SinkConfig.CLUSTER_DOMAIN).getValue()).isEqualTo(code.clusterDomain());
    assertThat(env.get(SinkConfig.SERVICE_ACCOUNT).getValue())
        .isEqualTo(code.serviceAccount())
        .isEqualTo(Rbac.SENDER);
    assertThat(env.get(SinkConfig.MAX_IN_FLIGHT).getValue())
        .isEqualTo(Integer.toString(code.maxInFlight()));
    assertThat(env.get(SinkConfig.MAX_IN_FLIGHT_PER_HOST).getValue())
        .isEqualTo(Integer.toString(code.maxInFlightPerHost()));
    assertThat(env.get(SinkConfig.MAX_IN_FLIGHT_PER_NAMESPACE).getValue())
        .isEqualTo(Integer.toString(code.maxInFlightPerNamespace()));

    RenderedChart chart =
        RenderedChart.render(
            """
        sink:
          allowedUris: [https://hooks.example.com/, http://127.0.0.1:8099]
          clusterDomain: corp.internal
          serviceAccount: orders-sender
          maxInFlight: 64
          maxInFlightPerHost: 4
          maxInFlightPerNamespace: 8
        """);
    Map<String, EnvVar> set = chart.operatorEnv();
    assertThat(set.get(SinkConfig.ALLOWED_URIS).getValue())
        .isEqualTo("https://hooks.example.com/,http://127.0.0.1:8099");
    assertThat(set.get(SinkConfig.CLUSTER_DOMAIN).getValue()).isEqualTo("corp.internal");
    assertThat(set.get(SinkConfig.SERVICE_ACCOUNT).getValue()).isEqualTo("orders-sender");
    assertThat(set.get(SinkConfig.MAX_IN_FLIGHT).getValue()).isEqualTo("64");
    assertThat(set.get(SinkConfig.MAX_IN_FLIGHT_PER_HOST).getValue()).isEqualTo("4");
    assertThat(set.get(SinkConfig.MAX_IN_FLIGHT_PER_NAMESPACE).getValue()).isEqualTo("8");
  }

  @Test
  void theOperatorMayRequestTokensOnlyForTheConfiguredSenderServiceAccount() {
    String values = "sink: {serviceAccount: orders-sender}\n";
    RenderedChart everywhere = RenderedChart.render(values);
    assertThat(Rbac.grants(everywhere.named(ClusterRole.class, FULLNAME).getRules()))
        .containsExactlyInAnyOrderElementsOf(Rbac.operator("orders-sender"));
    RenderedChart scoped = RenderedChart.render(values + WATCH_TWO_NAMESPACES);
    assertThat(scoped.all(Role.class))
        .filteredOn(r -> r.getMetadata().getName().equals(FULLNAME))
        .hasSize(2)
        .allSatisfy(
            r ->
                assertThat(Rbac.grants(r.getRules()))
                    .containsExactlyInAnyOrderElementsOf(Rbac.operator("orders-sender")));
    assertThat(everywhere.operatorEnv().get(SinkConfig.SERVICE_ACCOUNT).getValue())
        .as("the name the operator asks tokens for is the one RBAC allows")
        .isEqualTo("orders-sender");
  }

  @Test
  void badSinkValuesFailWithAMessageNamingTheValue() {
    for (String bad :
        List.of(
            "allowedUris: [ftp://files.example.com/]",
            "allowedUris: ['https://a/,https://b/']",
            "allowedUris: https://hooks.example.com/",
            "clusterDomain: Corp_Internal",
            "serviceAccount: ''",
            "serviceAccount: Orders",
            "maxInFlight: 0",
            "maxInFlightPerHost: '8'",
            "maxInFlight: 2.5",
            "maxInflight: 10")) {
      assertThatThrownBy(() -> RenderedChart.template("sink: {" + bad + "}"))
          .as("sink: {%s}", bad)
          .hasMessageContaining("sink");
    }
  }

  @Test
  void theAdmissionPolicyChecksJobAndTokenRightsOfWhoeverWritesATaskWithAJobTemplateOrAnAudience() {
    ValidatingAdmissionPolicy policy = defaults.named(ValidatingAdmissionPolicy.class, POLICY);
    assertThat(policy.getSpec().getFailurePolicy()).isEqualTo("Fail");
    assertThat(policy.getSpec().getMatchConstraints().getResourceRules())
        .singleElement()
        .satisfies(
            rule -> {
              assertThat(rule.getApiGroups()).containsExactly("delayedtask.io");
              assertThat(rule.getApiVersions()).containsExactly("v1alpha1");
              assertThat(rule.getResources())
                  .as("not delayedtasks/status: the second policy's")
                  .containsExactly("delayedtasks");
              assertThat(rule.getOperations()).containsExactlyInAnyOrder("CREATE", "UPDATE");
            });
    assertThat(policy.getSpec().getMatchConditions())
        .singleElement()
        .satisfies(
            c ->
                assertThat(c.getExpression())
                    .contains(
                        "object.spec.jobTemplate",
                        "object.spec.sink.audience",
                        "object.spec.sink.signing",
                        "object.spec.delivery.deadLetterSink.signing"));
    assertThat(policy.getSpec().getVariables()).hasSize(2);
    assertThat(policy.getSpec().getVariables().get(0))
        .satisfies(
            v -> {
              assertThat(v.getName()).isEqualTo("senderServiceAccount");
              assertThat(v.getExpression())
                  .as("sink.serviceAccount")
                  .isEqualTo("'delayedtask-sender'");
            });
    assertThat(policy.getSpec().getVariables().get(1))
        .satisfies(
            v -> {
              assertThat(v.getName()).isEqualTo("signingSecret");
              assertThat(v.getExpression())
                  .as("sink.signingSecret")
                  .isEqualTo("'delayedtask-signing'");
            });
    assertThat(policy.getSpec().getValidations()).hasSize(4);
    for (String field : List.of("spec.sink.signing", "spec.delivery.deadLetterSink.signing")) {
      assertThat(policy.getSpec().getValidations())
          .filteredOn(v -> v.getMessage().contains("with " + field + " "))
          .singleElement()
          .satisfies(
              v -> {
                assertThat(v.getExpression())
                    .contains(
                        "!has(object." + field + ")",
                        "authorizer.group('').resource('secrets')"
                            + ".namespace(request.namespace).name(variables.signingSecret).check('get').allowed()");
                assertThat(v.getReason()).isEqualTo("Forbidden");
                assertThat(v.getMessageExpression())
                    .contains(
                        "request.userInfo.username",
                        "request.namespace",
                        "ask for the get verb on secrets",
                        "remove " + field + "'");
              });
    }
    assertThat(
            RenderedChart.render("sink: {signingSecret: webhook-keys}")
                .named(ValidatingAdmissionPolicy.class, POLICY)
                .getSpec()
                .getVariables()
                .get(1)
                .getExpression())
        .isEqualTo("'webhook-keys'");
    assertThat(policy.getSpec().getValidations().get(0))
        .satisfies(
            v -> {
              assertThat(v.getExpression())
                  .isEqualTo(
                      "!has(object.spec.jobTemplate) || "
                          + "authorizer.group('batch').resource('jobs').namespace(request.namespace).check('create').allowed()");
              assertThat(v.getReason()).isEqualTo("Forbidden");
              assertThat(v.getMessageExpression())
                  .contains("request.userInfo.username", "ask for the create verb on jobs.batch");
              assertThat(v.getMessage())
                  .as("the fallback message")
                  .contains("remove spec.jobTemplate");
            });
    assertThat(policy.getSpec().getValidations().get(1))
        .satisfies(
            v -> {
              assertThat(v.getExpression())
                  .isEqualTo(
                      "!has(object.spec.sink) || !has(object.spec.sink.audience) || "
                          + "authorizer.group('').resource('serviceaccounts').subresource('token').namespace(request.namespace)"
                          + ".name(variables.senderServiceAccount).check('create').allowed()");
              assertThat(v.getReason()).isEqualTo("Forbidden");
              assertThat(v.getMessageExpression())
                  .contains(
                      "request.userInfo.username",
                      "request.namespace",
                      "serviceaccounts/token",
                      "remove spec.sink.audience");
              assertThat(v.getMessage())
                  .as("the fallback message")
                  .contains("remove spec.sink.audience");
            });
    assertThat(
            RenderedChart.render("sink: {serviceAccount: webhook-sender}")
                .named(ValidatingAdmissionPolicy.class, POLICY)
                .getSpec()
                .getVariables()
                .get(0)
                .getExpression())
        .isEqualTo("'webhook-sender'");

    for (String name : List.of(POLICY, STATUS_POLICY)) {
      ValidatingAdmissionPolicyBinding binding =
          defaults.named(ValidatingAdmissionPolicyBinding.class, name);
      assertThat(binding.getSpec().getPolicyName()).isEqualTo(name);
      assertThat(binding.getSpec().getValidationActions()).containsExactly("Deny");
      assertThat(binding.getSpec().getMatchResources()).as("every namespace").isNull();
      assertThat(binding.getSpec().getParamRef()).isNull();
    }
    assertThat(defaults.operatorEnv().get(OperatorConfig.ADMISSION_POLICY).getValue())
        .as("the operator requires both bindings")
        .isEqualTo(POLICY + "," + STATUS_POLICY);

    RenderedChart without = RenderedChart.render("admissionPolicy: {enabled: false}");
    assertThat(without.objects())
        .noneMatch(o -> o.getKind().startsWith("ValidatingAdmissionPolicy"));
    assertThat(without.operatorEnv().get(OperatorConfig.ADMISSION_POLICY).getValue())
        .as("without the policies the operator still fails closed unless told otherwise")
        .isEqualTo(POLICY + "," + STATUS_POLICY);
    assertThat(
            RenderedChart.render("admissionPolicy: {enabled: false, requiredBindings: none}")
                .operatorEnv()
                .get(OperatorConfig.ADMISSION_POLICY)
                .getValue())
        .isEqualTo("none");
  }

  /**
   * Issue 35: install.md said extraEnv and the chart said requiredBindings, and extraEnv gave the
   * container two DELAYEDTASK_ADMISSION_POLICY and kept the ClusterRole. One value now turns the
   * check off whole: no policy, no binding, no ClusterRole to watch them, the variable once.
   */
  @Test
  void requiredBindingsNoneIsTheOneWayToTurnTheCheckOff() {
    RenderedChart off = RenderedChart.render("admissionPolicy: {requiredBindings: none}");
    assertThat(off.objects())
        .extracting(o -> o.getKind() + "/" + o.getMetadata().getName())
        .as("everything the check needs is gone, and nothing else")
        .containsExactlyInAnyOrderElementsOf(
            defaults.objects().stream()
                .filter(o -> !o.getKind().startsWith("ValidatingAdmissionPolicy"))
                .filter(o -> !o.getMetadata().getName().equals(FULLNAME + "-admission-policy"))
                .map(o -> o.getKind() + "/" + o.getMetadata().getName())
                .toList());
    assertThat(off.operatorContainer().getEnv())
        .filteredOn(e -> e.getName().equals(OperatorConfig.ADMISSION_POLICY))
        .singleElement()
        .satisfies(e -> assertThat(e.getValue()).isEqualTo("none"));
    assertThat(
            OperatorConfig.fromEnv(asPodWouldSee(off.operatorEnv(), "pod")).checksAdmissionPolicy())
        .isFalse();
    assertThatThrownBy(
            () ->
                RenderedChart.template(
                    "extraEnv: [{name: DELAYEDTASK_ADMISSION_POLICY, value: none}]"))
        .hasMessageContaining(
            "extraEnv names DELAYEDTASK_ADMISSION_POLICY, which the chart sets itself: set admissionPolicy.requiredBindings");
    assertThatThrownBy(
            () -> RenderedChart.template("extraEnv: [{name: DELAYEDTASK_KEY_PREFIX, value: x}]"))
        .hasMessageContaining("set keyPrefix instead");
    assertThat(
            RenderedChart.render("extraEnv: [{name: JAVA_TOOL_OPTIONS, value: -Dx=y}]")
                .operatorEnv())
        .as("a variable the chart has no value for is extraEnv's to add")
        .containsKey("JAVA_TOOL_OPTIONS");
  }

  @Test
  void theStatusPolicyAdmitsOnlyTheOperatorsServiceAccountAndClusterAdmins() {
    ValidatingAdmissionPolicy policy =
        defaults.named(ValidatingAdmissionPolicy.class, STATUS_POLICY);
    assertThat(policy.getSpec().getFailurePolicy()).isEqualTo("Fail");
    assertThat(policy.getSpec().getMatchConstraints().getResourceRules())
        .singleElement()
        .satisfies(
            rule -> {
              assertThat(rule.getApiGroups()).containsExactly("delayedtask.io");
              assertThat(rule.getResources()).containsExactly("delayedtasks/status");
              assertThat(rule.getOperations()).contains("UPDATE");
            });
    assertThat(policy.getSpec().getMatchConditions()).isNullOrEmpty();
    assertThat(policy.getSpec().getVariables())
        .extracting(v -> v.getName() + "=" + v.getExpression())
        .containsExactly(
            "operator='system:serviceaccount:" + NAMESPACE + ":" + FULLNAME + "'",
            "statusWriters=[]");
    assertThat(
            RenderedChart.render(
                    "admissionPolicy: {statusWriters: ['system:serviceaccount:b:op', carol]}")
                .named(ValidatingAdmissionPolicy.class, STATUS_POLICY)
                .getSpec()
                .getVariables()
                .get(1)
                .getExpression())
        .isEqualTo("['system:serviceaccount:b:op','carol']");
    assertThat(policy.getSpec().getValidations())
        .singleElement()
        .satisfies(
            v -> {
              assertThat(v.getExpression())
                  .isEqualTo(
                      "request.userInfo.username == variables.operator "
                          + "|| request.userInfo.username in variables.statusWriters || ('system:masters' in request.userInfo.groups)");
              assertThat(v.getMessageExpression())
                  .contains("request.userInfo.username", "variables.operator");
            });
    assertThat(
            RenderedChart.render("serviceAccount: {name: dto-runner}")
                .named(ValidatingAdmissionPolicy.class, STATUS_POLICY)
                .getSpec()
                .getVariables()
                .get(0)
                .getExpression())
        .isEqualTo("'system:serviceaccount:" + NAMESPACE + ":dto-runner'");
    ValidatingAdmissionPolicyBinding scoped =
        RenderedChart.render(WATCH_TWO_NAMESPACES)
            .named(ValidatingAdmissionPolicyBinding.class, STATUS_POLICY);
    assertThat(scoped.getSpec().getMatchResources().getNamespaceSelector().getMatchExpressions())
        .as(
            "a release watching some namespaces guards their tasks' status only: two releases do not collide")
        .singleElement()
        .satisfies(
            e -> {
              assertThat(e.getKey()).isEqualTo("kubernetes.io/metadata.name");
              assertThat(e.getOperator()).isEqualTo("In");
              assertThat(e.getValues()).containsExactly("team-a", "team-b");
            });
  }

  @Test
  void leaseRoleCoversOnlyTheOperatorsLeaseInTheReleaseNamespace() {
    Role lease = defaults.named(Role.class, FULLNAME + "-leader-election");
    assertThat(lease.getMetadata().getNamespace()).isEqualTo(NAMESPACE);
    assertThat(Rbac.grants(lease.getRules()))
        .containsExactlyInAnyOrderElementsOf(Rbac.leaderElection(FULLNAME));
    RoleBinding binding = defaults.named(RoleBinding.class, FULLNAME + "-leader-election");
    assertThat(binding.getMetadata().getNamespace()).isEqualTo(NAMESPACE);
    assertThat(binding.getRoleRef().getKind()).isEqualTo("Role");
    assertThat(binding.getRoleRef().getName()).isEqualTo(lease.getMetadata().getName());
    assertBoundToOperatorServiceAccount(binding.getSubjects());
  }

  @Test
  void aggregatedRolesLetJobCreatorsWriteDelayedTasksAndViewersReadThem() {
    ClusterRole edit = defaults.named(ClusterRole.class, FULLNAME + "-edit");
    assertThat(edit.getMetadata().getLabels())
        .containsEntry("rbac.authorization.k8s.io/aggregate-to-admin", "true")
        .containsEntry("rbac.authorization.k8s.io/aggregate-to-edit", "true")
        .doesNotContainKey("rbac.authorization.k8s.io/aggregate-to-view");
    assertThat(Rbac.grants(edit.getRules())).containsExactlyInAnyOrderElementsOf(Rbac.USER_EDIT);

    ClusterRole view = defaults.named(ClusterRole.class, FULLNAME + "-view");
    assertThat(view.getMetadata().getLabels())
        .containsEntry("rbac.authorization.k8s.io/aggregate-to-view", "true")
        .doesNotContainKeys(
            "rbac.authorization.k8s.io/aggregate-to-admin",
            "rbac.authorization.k8s.io/aggregate-to-edit");
    assertThat(Rbac.grants(view.getRules())).containsExactlyInAnyOrderElementsOf(Rbac.USER_VIEW);
  }

  @Test
  void noRuleInAnyRenderingMentionsSecretsOrWildcards() {
    for (RenderedChart chart :
        List.of(
            defaults,
            RenderedChart.render(EXTERNAL_WITH_SECRET),
            RenderedChart.render(WATCH_TWO_NAMESPACES))) {
      List<PolicyRule> rules = new ArrayList<>();
      chart.all(ClusterRole.class).forEach(r -> rules.addAll(r.getRules()));
      chart.all(Role.class).forEach(r -> rules.addAll(r.getRules()));
      assertThat(rules).isNotEmpty().noneMatch(Rbac::mentionsSecretsOrWildcards);
    }
  }

  @Test
  void bundledRedisIsARestrictedAppendOnlyStatefulSetWiredToTheOperator() {
    StatefulSet redis = defaults.named(StatefulSet.class, REDIS);
    PodSpec pod = redis.getSpec().getTemplate().getSpec();
    RestrictedPodSecurity.assertRestricted(pod, "bundled redis");
    Container container = pod.getContainers().get(0);
    assertThat(container.getImage()).isEqualTo("redis:7.2.4");
    assertThat(String.join(" ", container.getCommand()))
        .contains("--appendonly yes", "--dir /data");
    assertThat(container.getLivenessProbe()).isNotNull();
    assertThat(container.getReadinessProbe().getExec().getCommand())
        .anyMatch(c -> c.contains("redis-cli") && c.contains("ping"));
    assertThat(container.getVolumeMounts())
        .anySatisfy(
            m -> {
              assertThat(m.getName()).isEqualTo("data");
              assertThat(m.getMountPath()).isEqualTo("/data");
            });
    assertThat(redis.getSpec().getVolumeClaimTemplates())
        .singleElement()
        .satisfies(
            pvc -> {
              assertThat(pvc.getMetadata().getName()).isEqualTo("data");
              assertThat(pvc.getSpec().getResources().getRequests().get("storage").toString())
                  .isEqualTo("1Gi");
            });
    assertThat(pod.getAutomountServiceAccountToken())
        .as("Redis does not talk to the API server")
        .isFalse();

    Service service = defaults.named(Service.class, REDIS);
    assertThat(service.getSpec().getSelector())
        .isEqualTo(redis.getSpec().getTemplate().getMetadata().getLabels());
    assertThat(service.getSpec().getPorts())
        .singleElement()
        .satisfies(p -> assertThat(p.getPort()).isEqualTo(6379));
    Map<String, EnvVar> env = defaults.operatorEnv();
    assertThat(env.get(OperatorConfig.REDIS_URI).getValue())
        .isEqualTo("redis://" + REDIS + "." + NAMESPACE + ".svc:6379");
    assertThat(env.get(OperatorConfig.REDIS_CLUSTER).getValue()).isEqualTo("false");
    assertThat(env.get(OperatorConfig.REDIS_SHARDS).getValue()).isEqualTo("1");
  }

  @Test
  void bundledRedisPersistenceTakesItsSizeAndStorageClass() {
    StatefulSet redis =
        RenderedChart.render(
                """
        redis:
          bundled:
            persistence:
              size: 5Gi
              storageClass: fast-ssd
        """)
            .named(StatefulSet.class, REDIS);
    assertThat(redis.getSpec().getVolumeClaimTemplates())
        .singleElement()
        .satisfies(
            pvc -> {
              assertThat(pvc.getSpec().getResources().getRequests().get("storage").toString())
                  .isEqualTo("5Gi");
              assertThat(pvc.getSpec().getStorageClassName()).isEqualTo("fast-ssd");
            });
    assertThat(
            defaults
                .named(StatefulSet.class, REDIS)
                .getSpec()
                .getVolumeClaimTemplates()
                .get(0)
                .getSpec()
                .getStorageClassName())
        .as("empty: the cluster's default StorageClass")
        .isNull();
  }

  @Test
  void bundledRedisWithoutPersistenceWritesNothingToDiskAndAsksForNoVolume() {
    StatefulSet redis =
        RenderedChart.render(
                """
        redis:
          bundled:
            persistence:
              enabled: false
        """)
            .named(StatefulSet.class, REDIS);
    assertThat(redis.getSpec().getVolumeClaimTemplates())
        .as("no PersistentVolumeClaim")
        .isNullOrEmpty();
    PodSpec pod = redis.getSpec().getTemplate().getSpec();
    assertThat(pod.getVolumes())
        .singleElement()
        .satisfies(
            volume -> {
              assertThat(volume.getName()).isEqualTo("data");
              assertThat(volume.getEmptyDir()).isNotNull();
              assertThat(volume.getPersistentVolumeClaim()).isNull();
            });
    Container container = pod.getContainers().get(0);
    String command = String.join(" ", container.getCommand());
    assertThat(command)
        .contains("--appendonly no", "--save \"\"", "--dir /data")
        .doesNotContain("--appendonly yes");
    assertThat(container.getVolumeMounts())
        .singleElement()
        .satisfies(m -> assertThat(m.getMountPath()).isEqualTo("/data"));
    RestrictedPodSecurity.assertRestricted(pod, "bundled redis without persistence");

    assertThatThrownBy(
            () -> RenderedChart.render("redis: {bundled: {persistence: {enabled: \"no\"}}}"))
        .as("a string where a boolean belongs")
        .hasMessageContaining("enabled");
  }

  private static final String EXTERNAL_WITH_SECRET =
      """
      redis:
        mode: external
        external:
          uri: redis://redis-0.cache:6379,redis-1.cache:6379,redis-2.cache:6379
          cluster: true
        auth:
          existingSecret: redis-credentials
          existingSecretPasswordKey: redis-password
      """;

  @Test
  void externalRedisTakesTheUriFromValuesAndThePasswordFromTheExistingSecret() {
    RenderedChart chart = RenderedChart.render(EXTERNAL_WITH_SECRET);
    assertThat(chart.all(StatefulSet.class)).as("no bundled Redis").isEmpty();
    assertThat(chart.all(Service.class))
        .extracting(s -> s.getMetadata().getName())
        .containsExactly(FULLNAME);

    Map<String, EnvVar> env = chart.operatorEnv();
    assertThat(env.get(OperatorConfig.REDIS_URI).getValue())
        .isEqualTo("redis://redis-0.cache:6379,redis-1.cache:6379,redis-2.cache:6379");
    assertThat(env.get(OperatorConfig.REDIS_CLUSTER).getValue()).isEqualTo("true");
    EnvVar password = env.get(OperatorConfig.REDIS_PASSWORD);
    assertThat(password.getValue()).as("never inline").isNull();
    assertThat(password.getValueFrom().getSecretKeyRef().getName()).isEqualTo("redis-credentials");
    assertThat(password.getValueFrom().getSecretKeyRef().getKey()).isEqualTo("redis-password");

    OperatorConfig config = OperatorConfig.fromEnv(asPodWouldSee(env, "pod"));
    assertThat(config.redisCluster()).isTrue();
    assertThat(config.redisUris()).hasSize(3);
  }

  @Test
  void redisClusterShardsReachTheOperatorOnlyWithAnExternalRedis() {
    RenderedChart chart =
        RenderedChart.render(
            """
        redis:
          mode: external
          external:
            uri: redis://redis-0.cache:6379,redis-1.cache:6379,redis-2.cache:6379
            cluster: true
            shards: 6
        """);
    Map<String, EnvVar> env = chart.operatorEnv();
    assertThat(env.get(OperatorConfig.REDIS_SHARDS).getValue()).isEqualTo("6");
    assertThat(OperatorConfig.fromEnv(asPodWouldSee(env, "pod")).redisShards()).isEqualTo(6);

    RenderedChart bundled = RenderedChart.render("redis: {external: {shards: 6}}");
    assertThat(bundled.operatorEnv().get(OperatorConfig.REDIS_SHARDS).getValue())
        .as("the bundled Redis is one node: redis.external.* does not apply")
        .isEqualTo("1");
  }

  @Test
  void bundledRedisWithASecretRequiresThePasswordOnBothSides() {
    RenderedChart chart =
        RenderedChart.render(
            """
        redis:
          auth:
            existingSecret: redis-credentials
        """);
    Container redis =
        chart
            .named(StatefulSet.class, REDIS)
            .getSpec()
            .getTemplate()
            .getSpec()
            .getContainers()
            .get(0);
    assertThat(String.join(" ", redis.getCommand())).contains("--requirepass \"$REDIS_PASSWORD\"");
    assertThat(redis.getEnv())
        .extracting(EnvVar::getName)
        .containsExactlyInAnyOrder("REDIS_PASSWORD", "REDISCLI_AUTH");
    assertThat(redis.getEnv())
        .allSatisfy(
            e -> {
              assertThat(e.getValueFrom().getSecretKeyRef().getName())
                  .isEqualTo("redis-credentials");
              assertThat(e.getValueFrom().getSecretKeyRef().getKey()).isEqualTo("password");
            });
    assertThat(
            chart
                .operatorEnv()
                .get(OperatorConfig.REDIS_PASSWORD)
                .getValueFrom()
                .getSecretKeyRef()
                .getName())
        .isEqualTo("redis-credentials");
  }

  private static final String WATCH_TWO_NAMESPACES =
      """
      watchNamespaces: [team-a, team-b]
      """;

  @Test
  void watchNamespacesGivesRolesInEachNamespaceAndNoClusterWidePower() {
    RenderedChart chart = RenderedChart.render(WATCH_TWO_NAMESPACES);
    assertThat(chart.all(ClusterRoleBinding.class))
        .extracting(b -> b.getMetadata().getName())
        .as("only the admission policy's watch (cluster-scoped kinds)")
        .containsExactly(FULLNAME + "-admission-policy");
    assertThat(chart.all(ClusterRole.class))
        .extracting(r -> r.getMetadata().getName())
        .as("only the aggregated roles and the admission policy's watch stay cluster-wide")
        .containsExactlyInAnyOrder(
            FULLNAME + "-edit",
            FULLNAME + "-view",
            FULLNAME + "-addressables",
            FULLNAME + "-admission-policy");
    assertThat(
            chart.all(RoleBinding.class).stream()
                .filter(b -> b.getMetadata().getName().equals(FULLNAME + "-addressables"))
                .toList())
        .extracting(b -> b.getMetadata().getNamespace())
        .containsExactlyInAnyOrder("team-a", "team-b");
    assertThat(
            Rbac.grants(chart.named(ClusterRole.class, FULLNAME + "-admission-policy").getRules()))
        .containsExactlyInAnyOrderElementsOf(Rbac.admissionPolicy());

    List<Role> operatorRoles =
        chart.all(Role.class).stream()
            .filter(r -> r.getMetadata().getName().equals(FULLNAME))
            .toList();
    assertThat(operatorRoles)
        .extracting(r -> r.getMetadata().getNamespace())
        .containsExactlyInAnyOrder("team-a", "team-b");
    assertThat(operatorRoles)
        .allSatisfy(
            r ->
                assertThat(Rbac.grants(r.getRules()))
                    .containsExactlyInAnyOrderElementsOf(Rbac.OPERATOR));
    List<RoleBinding> bindings =
        chart.all(RoleBinding.class).stream()
            .filter(b -> b.getMetadata().getName().equals(FULLNAME))
            .toList();
    assertThat(bindings)
        .extracting(b -> b.getMetadata().getNamespace())
        .containsExactlyInAnyOrder("team-a", "team-b");
    assertThat(bindings)
        .allSatisfy(
            b -> {
              assertThat(b.getRoleRef().getKind()).isEqualTo("Role");
              assertBoundToOperatorServiceAccount(b.getSubjects());
            });
    assertThat(chart.named(Role.class, FULLNAME + "-leader-election").getMetadata().getNamespace())
        .as("the Lease stays in the release namespace")
        .isEqualTo(NAMESPACE);

    Map<String, EnvVar> env = chart.operatorEnv();
    assertThat(env.get(OperatorConfig.NAMESPACES).getValue()).isEqualTo("team-a,team-b");
    assertThat(OperatorConfig.fromEnv(asPodWouldSee(env, "pod")).namespaces())
        .containsExactlyInAnyOrder("team-a", "team-b");
  }

  @Test
  void serviceMonitorScrapesMetricsOnTheHttpPortWhenEnabled() {
    assertThat(defaults.objects()).noneMatch(o -> o.getKind().equals("ServiceMonitor"));
    RenderedChart chart =
        RenderedChart.render(
            """
        serviceMonitor:
          enabled: true
          labels: {release: prometheus}
        """);
    List<HasMetadata> monitors =
        chart.objects().stream().filter(o -> o.getKind().equals("ServiceMonitor")).toList();
    assertThat(monitors)
        .singleElement()
        .satisfies(
            o -> {
              GenericKubernetesResource monitor = (GenericKubernetesResource) o;
              assertThat(monitor.getApiVersion()).isEqualTo("monitoring.coreos.com/v1");
              assertThat(monitor.getMetadata().getNamespace()).isEqualTo(NAMESPACE);
              assertThat(monitor.getMetadata().getLabels()).containsEntry("release", "prometheus");
              assertThat(monitor.<Map<String, String>>get("spec", "selector", "matchLabels"))
                  .isEqualTo(OPERATOR_POD);
              assertThat(monitor.<String>get("spec", "endpoints", 0, "port")).isEqualTo("http");
              assertThat(monitor.<String>get("spec", "endpoints", 0, "path")).isEqualTo("/metrics");
            });
  }

  @Test
  void aMonitorTakesANamespaceRelabelingsAndMetricRelabelingsAndAPodMonitorIsTheAlternative() {
    String options =
        """
          namespace: monitoring
          relabelings: [{targetLabel: cluster, replacement: prod}]
          metricRelabelings: [{sourceLabels: [__name__], regex: jvm_.*, action: drop}]
        """;
    GenericKubernetesResource service =
        monitor(
            RenderedChart.render("serviceMonitor:\n  enabled: true\n" + options), "ServiceMonitor");
    GenericKubernetesResource pod =
        monitor(RenderedChart.render("podMonitor:\n  enabled: true\n" + options), "PodMonitor");
    for (GenericKubernetesResource monitor : List.of(service, pod)) {
      String endpoints =
          monitor.getKind().equals("PodMonitor") ? "podMetricsEndpoints" : "endpoints";
      assertThat(monitor.getMetadata().getNamespace()).isEqualTo("monitoring");
      assertThat(monitor.<List<String>>get("spec", "namespaceSelector", "matchNames"))
          .containsExactly(NAMESPACE);
      assertThat(monitor.<Map<String, String>>get("spec", "selector", "matchLabels"))
          .isEqualTo(OPERATOR_POD);
      assertThat(monitor.<String>get("spec", endpoints, 0, "port")).isEqualTo("http");
      assertThat(monitor.<String>get("spec", endpoints, 0, "path")).isEqualTo("/metrics");
      assertThat(monitor.<String>get("spec", endpoints, 0, "relabelings", 0, "replacement"))
          .isEqualTo("prod");
      assertThat(monitor.<String>get("spec", endpoints, 0, "metricRelabelings", 0, "action"))
          .isEqualTo("drop");
    }
    assertThat(defaults.objects()).noneMatch(o -> o.getKind().equals("PodMonitor"));
    assertThat(
            monitor(RenderedChart.render("serviceMonitor: {enabled: true}"), "ServiceMonitor")
                .<Object>get("spec", "endpoints", 0, "relabelings"))
        .isNull();
    assertThatThrownBy(
            () ->
                RenderedChart.template(
                    "{serviceMonitor: {enabled: true}, podMonitor: {enabled: true}}"))
        .hasMessageContaining("serviceMonitor.enabled")
        .hasMessageContaining("podMonitor.enabled");
  }

  private static GenericKubernetesResource monitor(RenderedChart chart, String kind) {
    List<HasMetadata> monitors =
        chart.objects().stream().filter(o -> o.getKind().equals(kind)).toList();
    assertThat(monitors).hasSize(1);
    return (GenericKubernetesResource) monitors.get(0);
  }

  @Test
  void networkPolicyLetsOnlyTheOperatorReachTheBundledRedisByDefault() {
    NetworkPolicy policy = defaults.one(NetworkPolicy.class);
    assertThat(policy.getSpec().getPodSelector().getMatchLabels())
        .isEqualTo(
            defaults
                .named(StatefulSet.class, REDIS)
                .getSpec()
                .getTemplate()
                .getMetadata()
                .getLabels());
    assertThat(policy.getSpec().getPolicyTypes()).containsExactly("Ingress");
    assertThat(policy.getSpec().getIngress())
        .singleElement()
        .satisfies(
            rule -> {
              assertThat(rule.getFrom())
                  .singleElement()
                  .satisfies(
                      peer -> {
                        assertThat(peer.getPodSelector().getMatchLabels()).isEqualTo(OPERATOR_POD);
                        assertThat(peer.getNamespaceSelector()).as("same namespace only").isNull();
                      });
              assertThat(rule.getPorts())
                  .singleElement()
                  .satisfies(p -> assertThat(p.getPort().getIntVal()).isEqualTo(6379));
            });

    assertThat(RenderedChart.render("networkPolicy: {enabled: false}").all(NetworkPolicy.class))
        .isEmpty();
    RenderedChart external = RenderedChart.render(EXTERNAL_WITH_SECRET);
    assertThat(external.all(NetworkPolicy.class))
        .as("nothing to protect with an external Redis")
        .isEmpty();
  }

  /**
   * A password generated by a template changes on every render where Helm's lookup does not run
   * (helm template, Argo CD): the pods restarted after a re-render then disagree with Redis. So the
   * chart renders the same manifests every time and generates no password: the bundled Redis and
   * the operator read the Secret the installer created, and go without one while it is absent.
   */
  @Test
  void theChartRendersTheSameEveryTimeAndGeneratesNoPassword() {
    for (String values :
        List.of(
            "{}", "networkPolicy: {enabled: false}", WATCH_TWO_NAMESPACES, EXTERNAL_WITH_SECRET)) {
      assertThat(RenderedChart.template(values))
          .as("two renders of %s", values)
          .isEqualTo(RenderedChart.template(values));
    }
    assertThat(defaults.all(io.fabric8.kubernetes.api.model.Secret.class))
        .as("no password in the manifests")
        .isEmpty();

    Container redis =
        defaults
            .named(StatefulSet.class, REDIS)
            .getSpec()
            .getTemplate()
            .getSpec()
            .getContainers()
            .get(0);
    assertThat(redis.getEnv())
        .extracting(EnvVar::getName)
        .containsExactlyInAnyOrder("REDIS_PASSWORD", "REDISCLI_AUTH");
    assertThat(redis.getEnv())
        .allSatisfy(
            e -> {
              assertThat(e.getValue()).as("never inline").isNull();
              assertThat(e.getValueFrom().getSecretKeyRef().getName()).isEqualTo(REDIS + "-auth");
              assertThat(e.getValueFrom().getSecretKeyRef().getKey()).isEqualTo("password");
              assertThat(e.getValueFrom().getSecretKeyRef().getOptional())
                  .as("the installer may not have created it")
                  .isTrue();
            });
    EnvVar operator = defaults.operatorEnv().get(OperatorConfig.REDIS_PASSWORD);
    assertThat(operator.getValue()).isNull();
    assertThat(operator.getValueFrom().getSecretKeyRef().getName()).isEqualTo(REDIS + "-auth");
    assertThat(operator.getValueFrom().getSecretKeyRef().getOptional()).isTrue();

    RenderedChart own = RenderedChart.render("redis: {auth: {existingSecret: redis-credentials}}");
    assertThat(own.all(io.fabric8.kubernetes.api.model.Secret.class))
        .as("the installer's Secret instead")
        .isEmpty();
    assertThat(
            own.operatorEnv()
                .get(OperatorConfig.REDIS_PASSWORD)
                .getValueFrom()
                .getSecretKeyRef()
                .getOptional())
        .as(
            "a Secret the installer named must exist: a missing one stops the pod rather than drop the password")
        .isNull();
    assertThat(
            own.named(StatefulSet.class, REDIS)
                .getSpec()
                .getTemplate()
                .getSpec()
                .getContainers()
                .get(0)
                .getEnv())
        .allSatisfy(e -> assertThat(e.getValueFrom().getSecretKeyRef().getOptional()).isNull());
    RenderedChart externalWithout =
        RenderedChart.render("redis: {mode: external, external: {uri: 'redis://r:6379'}}");
    assertThat(externalWithout.all(io.fabric8.kubernetes.api.model.Secret.class)).isEmpty();
    assertThat(externalWithout.operatorEnv())
        .as("an external Redis without a Secret: no password")
        .doesNotContainKey(OperatorConfig.REDIS_PASSWORD);
  }

  /**
   * The bundled Redis' command, run by a real shell against a stand-in redis-server that prints its
   * arguments: requirepass with the Secret's password (spaces and all) when the variable is set,
   * none when it is not, never the literal "$(REDIS_PASSWORD)".
   */
  @Test
  void theBundledRedisRequiresThePasswordExactlyWhenItsSecretHoldsOne() throws Exception {
    Container redis =
        defaults
            .named(StatefulSet.class, REDIS)
            .getSpec()
            .getTemplate()
            .getSpec()
            .getContainers()
            .get(0);
    List<String> command = redis.getCommand();
    assertThat(command).hasSize(3).startsWith("sh", "-c");
    assertThat(redis.getArgs()).isNullOrEmpty();
    assertThat(redisArguments(command, "two words;$(x)"))
        .containsExactly(
            "--appendonly", "yes", "--dir", "/data", "--requirepass", "two words;$(x)");
    assertThat(redisArguments(command, null))
        .containsExactly("--appendonly", "yes", "--dir", "/data");
  }

  private static List<String> redisArguments(List<String> command, String password)
      throws Exception {
    java.nio.file.Path bin = Files.createTempDirectory("fake-redis");
    try {
      java.nio.file.Path fake = bin.resolve("redis-server");
      Files.writeString(fake, "#!/bin/sh\nprintf '%s\\n' \"$@\"\n");
      fake.toFile().setExecutable(true);
      ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
      builder.environment().put("PATH", bin + ":" + System.getenv("PATH"));
      builder.environment().remove("REDIS_PASSWORD");
      if (password != null) {
        builder.environment().put("REDIS_PASSWORD", password);
      }
      Process process = builder.start();
      String output =
          new String(
              process.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
      assertThat(process.waitFor()).as(output).isZero();
      return output.lines().toList();
    } finally {
      Files.deleteIfExists(bin.resolve("redis-server"));
      Files.delete(bin);
    }
  }

  @Test
  void theOptionalEgressPolicyAdmitsDnsTheApiServerRedisAndTheListedCidrsOnly() {
    assertThat(defaults.all(NetworkPolicy.class))
        .as("off by default")
        .extracting(p -> p.getMetadata().getName())
        .containsExactly(REDIS);
    assertThatThrownBy(() -> RenderedChart.template("networkPolicy: {egress: {enabled: true}}"))
        .hasMessageContaining("networkPolicy.egress.apiServerCidrs");
    RenderedChart chart =
        RenderedChart.render(
            """
        networkPolicy:
          egress:
            enabled: true
            apiServerCidrs: [10.0.0.1/32]
            cidrs: [10.96.0.0/12, 203.0.113.0/24]
        """);
    NetworkPolicy egress = chart.named(NetworkPolicy.class, FULLNAME + "-egress");
    assertThat(egress.getSpec().getPodSelector().getMatchLabels()).isEqualTo(OPERATOR_POD);
    assertThat(egress.getSpec().getPolicyTypes()).containsExactly("Egress");
    assertThat(egress.getSpec().getIngress()).isNullOrEmpty();
    var rules = egress.getSpec().getEgress();
    assertThat(rules).hasSize(4);
    assertThat(rules.get(0))
        .as("DNS")
        .satisfies(
            rule -> {
              assertThat(rule.getTo())
                  .singleElement()
                  .satisfies(
                      peer -> {
                        assertThat(peer.getNamespaceSelector().getMatchLabels())
                            .containsEntry("kubernetes.io/metadata.name", "kube-system");
                        assertThat(peer.getPodSelector().getMatchLabels())
                            .containsEntry("k8s-app", "kube-dns");
                      });
              assertThat(rule.getPorts())
                  .extracting(p -> p.getProtocol() + "/" + p.getPort().getIntVal())
                  .containsExactlyInAnyOrder("UDP/53", "TCP/53");
            });
    assertThat(rules.get(1))
        .as("the API server")
        .satisfies(
            rule -> {
              assertThat(rule.getTo())
                  .extracting(peer -> peer.getIpBlock().getCidr())
                  .containsExactly("10.0.0.1/32");
              assertThat(rule.getPorts())
                  .extracting(p -> p.getPort().getIntVal())
                  .containsExactlyInAnyOrder(443, 6443);
            });
    assertThat(rules.get(2))
        .as("the bundled Redis")
        .satisfies(
            rule -> {
              assertThat(rule.getTo())
                  .singleElement()
                  .satisfies(
                      peer ->
                          assertThat(peer.getPodSelector().getMatchLabels())
                              .isEqualTo(
                                  chart
                                      .named(StatefulSet.class, REDIS)
                                      .getSpec()
                                      .getTemplate()
                                      .getMetadata()
                                      .getLabels()));
              assertThat(rule.getPorts())
                  .extracting(p -> p.getPort().getIntVal())
                  .containsExactly(6379);
            });
    assertThat(rules.get(3))
        .as("what the installer listed")
        .satisfies(
            rule -> {
              assertThat(rule.getTo())
                  .extracting(peer -> peer.getIpBlock().getCidr())
                  .containsExactly("10.96.0.0/12", "203.0.113.0/24");
              assertThat(rule.getPorts()).isNullOrEmpty();
            });
    assertThatThrownBy(
            () ->
                RenderedChart.template(
                    "networkPolicy: {egress: {enabled: true, apiServerCidrs: ['10.0.0.1']}}"))
        .hasMessageContaining("apiServerCidrs");
  }

  /**
   * A message that names the value {@code dotted}: as the chart's own checks write it
   * (redis.external.uri), or as the JSON pointer Helm's schema check prints (/redis/external/uri).
   */
  private static String naming(String dotted) {
    return "(?s).*("
        + Pattern.quote(dotted)
        + "|"
        + Pattern.quote("/" + dotted.replace('.', '/'))
        + ").*";
  }

  @Test
  void badValuesFailWithAMessageNamingTheValue() {
    assertThatThrownBy(() -> RenderedChart.template("redis: {mode: external}"))
        .hasMessageMatching(naming("redis.external.uri"));
    assertThatThrownBy(() -> RenderedChart.template("redis: {mode: sentinel}"))
        .hasMessageMatching(naming("redis.mode"));
    assertThatThrownBy(() -> RenderedChart.template("leaderElection: {enabled: false}"))
        .hasMessageContaining("replicaCount=1");
    assertThatThrownBy(() -> RenderedChart.template("watchNamespaces: [Team_A]"))
        .hasMessageContaining("watchNamespaces");
    for (String shards : List.of("0", "1025", "2.5", "'4'")) {
      assertThatThrownBy(
              () -> RenderedChart.template("redis: {external: {shards: " + shards + "}}"))
          .as("shards: %s", shards)
          .hasMessageContaining("shards");
    }
    for (String seconds : List.of("1", "3601", "'15'", "7.5")) {
      assertThatThrownBy(
              () ->
                  RenderedChart.template("leaderElection: {leaseDurationSeconds: " + seconds + "}"))
          .as("leaseDurationSeconds: %s", seconds)
          .hasMessageContaining("leaseDurationSeconds");
    }
    for (String seconds : List.of("0", "86401", "'60'")) {
      assertThatThrownBy(() -> RenderedChart.template("claimLeaseSeconds: " + seconds))
          .as("claimLeaseSeconds: %s", seconds)
          .hasMessageContaining("claimLeaseSeconds");
    }
    assertThatThrownBy(() -> RenderedChart.template("replicaCont: 3"))
        .as("typos in value names are refused, not ignored")
        .hasMessageContaining("replicaCont");
  }

  @Test
  void notesTellTheUserWhatToTryFirstWithATaskTheApiAccepts() {
    String notes =
        new Helm(Manifests.CHART)
            .install()
            .withName(RenderedChart.RELEASE)
            .withNamespace(NAMESPACE)
            .clientOnly()
            .withKubeVersion(RenderedChart.KUBE_VERSION)
            .withDryRunOption(DryRun.CLIENT)
            .call()
            .getOutput();
    assertThat(notes)
        .contains("kubectl -n ops rollout status deployment/" + FULLNAME, "get dt hello-later -w");

    Matcher heredoc = Pattern.compile("(?s)<<'YAML'[^\\n]*\\n(.*?)\\n\\s*YAML\\n").matcher(notes);
    assertThat(heredoc.find()).as("NOTES carry a DelayedTask to apply:%n%s", notes).isTrue();
    String manifest =
        heredoc
            .group(1)
            .lines()
            .map(line -> line.length() > 3 ? line.substring(3) : line.strip())
            .collect(Collectors.joining("\n"));
    DelayedTask task = Manifests.SERIALIZATION.unmarshal(manifest, DelayedTask.class);
    assertThat(task.getSpec().getDelay()).isEqualTo("30s");
    assertThat(task.getSpec().getJobTemplate().getSpec().getTemplate().getSpec().getContainers())
        .hasSize(1);
    assertThat(Manifests.unknownFields(task.getSpec().getJobTemplate(), "NOTES jobTemplate"))
        .isEmpty();
    assertThat(notes)
        .as("how to give the bundled Redis its password")
        .contains(
            "kubectl -n ops create secret generic " + REDIS + "-auth --from-literal=password=",
            "kubectl -n ops rollout restart statefulset/" + REDIS + " deployment/" + FULLNAME)
        .doesNotContain("NOTE: the bundled Redis has no NetworkPolicy");
    String open =
        new Helm(Manifests.CHART)
            .install()
            .withName(RenderedChart.RELEASE)
            .withNamespace(NAMESPACE)
            .clientOnly()
            .withKubeVersion(RenderedChart.KUBE_VERSION)
            .withDryRunOption(DryRun.CLIENT)
            .set("networkPolicy.enabled", false)
            .call()
            .getOutput();
    assertThat(open)
        .contains(
            "the bundled Redis has no NetworkPolicy",
            "without the Secret above it has no password");
    String own =
        new Helm(Manifests.CHART)
            .install()
            .withName(RenderedChart.RELEASE)
            .withNamespace(NAMESPACE)
            .clientOnly()
            .withKubeVersion(RenderedChart.KUBE_VERSION)
            .withDryRunOption(DryRun.CLIENT)
            .set("networkPolicy.enabled", false)
            .set("redis.auth.existingSecret", "redis-credentials")
            .call()
            .getOutput();
    assertThat(own).contains("and try its password").doesNotContain("create secret generic");
  }

  @Test
  void theUnpullableDefaultImageIsWarnedOfAndRefusedWhereItCanNeverStart() {
    String notes =
        new Helm(Manifests.CHART)
            .install()
            .withName(RenderedChart.RELEASE)
            .withNamespace(NAMESPACE)
            .clientOnly()
            .withKubeVersion(RenderedChart.KUBE_VERSION)
            .withDryRunOption(DryRun.CLIENT)
            .call()
            .getOutput();
    assertThat(notes)
        .contains(
            "WARNING: image.repository is \"delayed-task-operator\"",
            "ImagePullBackOff",
            "--reuse-values");
    String pushed =
        new Helm(Manifests.CHART)
            .install()
            .withName(RenderedChart.RELEASE)
            .withNamespace(NAMESPACE)
            .clientOnly()
            .withKubeVersion(RenderedChart.KUBE_VERSION)
            .withDryRunOption(DryRun.CLIENT)
            .set("image.repository", "registry.example.com/dto")
            .call()
            .getOutput();
    assertThat(pushed).doesNotContain("WARNING: image.repository");
    assertThatThrownBy(() -> RenderedChart.template("image: {pullPolicy: Always}"))
        .hasMessageContaining(
            "image.repository=delayed-task-operator with image.pullPolicy=Always cannot start");
    assertThat(
            RenderedChart.render(
                    "image: {repository: registry.example.com/dto, pullPolicy: Always}")
                .operatorContainer()
                .getImage())
        .startsWith("registry.example.com/dto:");
  }

  /**
   * Keys whose value is a Kubernetes object documented by Kubernetes itself; the key has the
   * comment.
   */
  private static final Set<String> KUBERNETES_OBJECT_VALUES =
      Set.of("resources", "podSecurityContext", "securityContext");

  @Test
  void everyValueHasACommentAboveIt() throws IOException {
    List<String> lines = Files.readAllLines(Manifests.CHART.resolve("values.yaml"));
    Pattern key = Pattern.compile("^( *)([A-Za-z][A-Za-z0-9_.-]*):");
    Deque<Map.Entry<Integer, String>> parents = new ArrayDeque<>();
    List<String> uncommented = new ArrayList<>();
    for (int i = 0; i < lines.size(); i++) {
      Matcher line = key.matcher(lines.get(i));
      if (!line.find()) {
        continue;
      }
      int indent = line.group(1).length();
      while (!parents.isEmpty() && parents.peek().getKey() >= indent) {
        parents.pop();
      }
      boolean insideKubernetesObject =
          parents.stream().anyMatch(p -> KUBERNETES_OBJECT_VALUES.contains(p.getValue()));
      if (!insideKubernetesObject && (i == 0 || !lines.get(i - 1).strip().startsWith("#"))) {
        uncommented.add((i + 1) + ": " + lines.get(i).strip());
      }
      parents.push(Map.entry(indent, line.group(2)));
    }
    assertThat(uncommented).as("values.yaml keys without a comment line above").isEmpty();
  }

  @Test
  void singleReplicaWithoutLeaderElectionDropsTheLeaseRole() {
    RenderedChart chart =
        RenderedChart.render(
            """
        replicaCount: 1
        leaderElection: {enabled: false}
        """);
    assertThat(chart.all(Role.class)).isEmpty();
    assertThat(chart.operatorEnv().get(OperatorConfig.LEADER_ELECTION).getValue())
        .isEqualTo("false");
  }

  private static void assertHttpProbe(Probe probe, String path) {
    assertThat(probe).as(path).isNotNull();
    assertThat(probe.getHttpGet().getPath()).isEqualTo(path);
    assertThat(probe.getHttpGet().getPort().getStrVal()).isEqualTo("http");
  }

  private static void assertBoundToOperatorServiceAccount(List<Subject> subjects) {
    assertThat(subjects)
        .singleElement()
        .satisfies(
            subject -> {
              assertThat(subject.getKind()).isEqualTo("ServiceAccount");
              assertThat(subject.getName()).isEqualTo(FULLNAME);
              assertThat(subject.getNamespace()).isEqualTo(NAMESPACE);
            });
  }

  private static Map<String, String> asPodWouldSee(Map<String, EnvVar> env, String podName) {
    return PodEnvironment.resolve(Map.of(), List.copyOf(env.values()), NAMESPACE, podName);
  }
}
