package io.delayedtask.operator.deploy;

import static io.delayedtask.operator.deploy.RenderedChart.FULLNAME;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.delayedtask.operator.config.OperatorConfig;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.TopologySpreadConstraint;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The values Helm users reach for beyond the defaults: extra environment, volumes and mounts (a
 * truststore under the read-only root filesystem), an image digest, log level and format, free-form
 * topologySpreadConstraints, and the bundled Redis' pinned tag, digest, annotations and scheduling;
 * each rendered by Helm's engine and checked in the objects, and refused by values.schema.json when
 * malformed.
 */
class HelmChartValuesTest {
  private static final String REDIS = FULLNAME + "-redis";
  private static final String DIGEST = "sha256:" + "0123456789abcdef".repeat(4);

  @Test
  void aTruststoreMountsThroughExtraVolumesAndReachesTheJvmThroughExtraEnv() {
    RenderedChart chart =
        RenderedChart.render(
            """
        extraEnv:
          - {name: JAVA_TOOL_OPTIONS, value: "-Djavax.net.ssl.trustStore=/etc/truststore/truststore.p12"}
        extraVolumes:
          - {name: truststore, secret: {secretName: redis-ca-truststore}}
        extraVolumeMounts:
          - {name: truststore, mountPath: /etc/truststore, readOnly: true}
        """);
    PodSpec pod = chart.one(Deployment.class).getSpec().getTemplate().getSpec();
    Container operator = pod.getContainers().get(0);
    assertThat(pod.getVolumes()).extracting(Volume::getName).containsExactly("tmp", "truststore");
    assertThat(pod.getVolumes().get(1).getSecret().getSecretName())
        .isEqualTo("redis-ca-truststore");
    assertThat(operator.getVolumeMounts())
        .extracting(VolumeMount::getMountPath)
        .containsExactly("/tmp", "/etc/truststore");
    assertThat(operator.getVolumeMounts().get(1).getReadOnly()).isTrue();
    assertThat(chart.operatorEnv().get("JAVA_TOOL_OPTIONS").getValue()).contains("truststore.p12");
    RestrictedPodSecurity.assertRestricted(pod, "operator with a truststore");

    PodSpec defaults =
        RenderedChart.render("{}").one(Deployment.class).getSpec().getTemplate().getSpec();
    assertThat(defaults.getVolumes()).extracting(Volume::getName).containsExactly("tmp");
  }

  @Test
  void theDefaultStartingDeadlineReachesTheOperatorOnlyWhenSet() {
    assertThat(RenderedChart.render("{}").operatorEnv())
        .doesNotContainKey(OperatorConfig.DEFAULT_STARTING_DEADLINE_SECONDS);
    Map<String, EnvVar> env =
        RenderedChart.render("defaultStartingDeadlineSeconds: 3600").operatorEnv();
    assertThat(env.get(OperatorConfig.DEFAULT_STARTING_DEADLINE_SECONDS).getValue())
        .isEqualTo("3600");
    assertThat(
            OperatorConfig.fromEnv(Map.of(OperatorConfig.DEFAULT_STARTING_DEADLINE_SECONDS, "3600"))
                .defaultStartingDeadline())
        .contains(java.time.Duration.ofHours(1));
    assertThatThrownBy(() -> RenderedChart.template("defaultStartingDeadlineSeconds: -1"))
        .hasMessageContaining("defaultStartingDeadlineSeconds");
  }

  @Test
  void anImageDigestPinsTheOperatorImageInsteadOfTheTag() {
    assertThat(image(RenderedChart.render("{}"))).isEqualTo("delayed-task-operator:0.1.0");
    assertThat(
            image(
                RenderedChart.render(
                    "image: {repository: registry.example.com/dto, tag: ignored, digest: "
                        + DIGEST
                        + "}")))
        .isEqualTo("registry.example.com/dto@" + DIGEST);
    assertThatThrownBy(() -> RenderedChart.template("image: {digest: latest}"))
        .hasMessageContaining("digest");
  }

  @Test
  void logLevelAndFormatReachTheOperatorWhichAcceptsThem() {
    Map<String, EnvVar> defaults = RenderedChart.render("{}").operatorEnv();
    assertThat(defaults.get(OperatorConfig.LOG_LEVEL).getValue()).isEqualTo("INFO");
    assertThat(defaults.get(OperatorConfig.LOG_FORMAT).getValue()).isEqualTo("text");

    Map<String, EnvVar> env =
        RenderedChart.render("{logLevel: DEBUG, logFormat: json}").operatorEnv();
    assertThat(env.get(OperatorConfig.LOG_LEVEL).getValue()).isEqualTo("DEBUG");
    assertThat(env.get(OperatorConfig.LOG_FORMAT).getValue()).isEqualTo("json");
    Map<String, String> plain = new HashMap<>();
    env.forEach(
        (name, var) -> {
          if (var.getValue() != null) {
            plain.put(name, var.getValue());
          }
        });
    OperatorConfig.fromEnv(plain); // refuses a log level or format it does not know

    assertThatThrownBy(() -> RenderedChart.template("logFormat: yaml"))
        .hasMessageContaining("logFormat");
    assertThatThrownBy(() -> RenderedChart.template("logLevel: verbose"))
        .hasMessageContaining("logLevel");
  }

  @Test
  void freeFormTopologySpreadConstraintsReplaceTheDefaultSpread() {
    TopologySpreadConstraint byDefault = constraints(RenderedChart.render("{}"))[0];
    assertThat(byDefault.getTopologyKey()).isEqualTo("kubernetes.io/hostname");

    RenderedChart chart =
        RenderedChart.render(
            """
        topologySpreadConstraints:
          - maxSkew: 1
            topologyKey: topology.kubernetes.io/zone
            whenUnsatisfiable: DoNotSchedule
            labelSelector:
              matchLabels:
                app.kubernetes.io/instance: '{{ .Release.Name }}'
                app.kubernetes.io/component: operator
        """);
    TopologySpreadConstraint[] constraints = constraints(chart);
    assertThat(constraints).hasSize(1);
    assertThat(constraints[0].getTopologyKey()).isEqualTo("topology.kubernetes.io/zone");
    assertThat(constraints[0].getWhenUnsatisfiable()).isEqualTo("DoNotSchedule");
    assertThat(constraints[0].getLabelSelector().getMatchLabels())
        .containsEntry("app.kubernetes.io/instance", RenderedChart.RELEASE);
    assertThatThrownBy(
            () -> RenderedChart.template("topologySpreadConstraints: [{topologyKey: zone}]"))
        .hasMessageContaining("maxSkew");
  }

  @Test
  void theBundledRedisIsPinnedAndSchedulable() {
    StatefulSet byDefault = RenderedChart.render("{}").named(StatefulSet.class, REDIS);
    assertThat(byDefault.getSpec().getTemplate().getSpec().getContainers().get(0).getImage())
        .as("a patch release, not a floating major tag")
        .matches("redis:\\d+\\.\\d+\\.\\d+");

    StatefulSet redis =
        RenderedChart.render(
                """
        redis:
          bundled:
            image: {digest: %s}
            podAnnotations: {backup.velero.io/backup-volumes: data}
            priorityClassName: platform-critical
            nodeSelector: {pool: stateful}
            tolerations: [{key: dedicated, operator: Equal, value: stateful, effect: NoSchedule}]
            affinity:
              nodeAffinity:
                requiredDuringSchedulingIgnoredDuringExecution:
                  nodeSelectorTerms:
                    - matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [zone-a]}]
        """
                    .formatted(DIGEST))
            .named(StatefulSet.class, REDIS);
    PodSpec pod = redis.getSpec().getTemplate().getSpec();
    assertThat(pod.getContainers().get(0).getImage()).isEqualTo("redis@" + DIGEST);
    assertThat(redis.getSpec().getTemplate().getMetadata().getAnnotations())
        .containsEntry("backup.velero.io/backup-volumes", "data");
    assertThat(pod.getPriorityClassName()).isEqualTo("platform-critical");
    assertThat(pod.getNodeSelector()).containsEntry("pool", "stateful");
    assertThat(pod.getTolerations())
        .singleElement()
        .satisfies(t -> assertThat(t.getValue()).isEqualTo("stateful"));
    assertThat(
            pod.getAffinity()
                .getNodeAffinity()
                .getRequiredDuringSchedulingIgnoredDuringExecution()
                .getNodeSelectorTerms())
        .hasSize(1);
    RestrictedPodSecurity.assertRestricted(pod, "bundled redis with scheduling values");
  }

  @Test
  void aStartupProbeOnHealthzHoldsTheLivenessProbeBackUntilTheOperatorHasStarted() {
    Container operator = RenderedChart.render("{}").operatorContainer();
    assertThat(operator.getStartupProbe().getHttpGet().getPath())
        .isEqualTo(operator.getLivenessProbe().getHttpGet().getPath());
    assertThat(operator.getStartupProbe().getHttpGet().getPort().getStrVal()).isEqualTo("http");
    assertThat(operator.getStartupProbe().getFailureThreshold()).isEqualTo(24);

    Container tuned =
        RenderedChart.render("probes: {startup: {failureThreshold: 60}}").operatorContainer();
    assertThat(tuned.getStartupProbe().getFailureThreshold()).isEqualTo(60);
    assertThatThrownBy(() -> RenderedChart.template("probes: {startup: {failureThreshold: 0}}"))
        .hasMessageContaining("failureThreshold");
  }

  @Test
  void commonLabelsReachEveryObjectButNoSelector() {
    RenderedChart chart =
        RenderedChart.render("commonLabels: {team: platform, cost-center: \"42\"}");
    assertThat(chart.objects())
        .isNotEmpty()
        .allSatisfy(
            object ->
                assertThat(object.getMetadata().getLabels())
                    .as("%s %s", object.getKind(), object.getMetadata().getName())
                    .containsEntry("team", "platform")
                    .containsEntry("cost-center", "42"));
    Deployment deployment = chart.one(Deployment.class);
    assertThat(deployment.getSpec().getSelector().getMatchLabels()).doesNotContainKey("team");
    assertThat(chart.named(StatefulSet.class, REDIS).getSpec().getSelector().getMatchLabels())
        .doesNotContainKey("team");
    assertThat(RenderedChart.render("{}").one(Deployment.class).getMetadata().getLabels())
        .doesNotContainKey("team");
  }

  @Test
  void extraObjectsAreRenderedWithTheReleaseThroughTpl() {
    RenderedChart chart =
        RenderedChart.render(
            """
        extraObjects:
          - apiVersion: v1
            kind: ConfigMap
            metadata: {name: '{{ include "dto.fullname" . }}-extra', namespace: '{{ .Release.Namespace }}'}
            data: {release: '{{ .Release.Name }}'}
          - |
            apiVersion: v1
            kind: Secret
            metadata:
              name: {{ .Release.Name }}-sink-signing
            stringData: {key: not-a-real-key}
        """);
    ConfigMap extra = chart.named(ConfigMap.class, FULLNAME + "-extra");
    assertThat(extra.getMetadata().getNamespace()).isEqualTo(RenderedChart.NAMESPACE);
    assertThat(extra.getData()).containsEntry("release", RenderedChart.RELEASE);
    assertThat(chart.named(Secret.class, RenderedChart.RELEASE + "-sink-signing")).isNotNull();
    assertThat(RenderedChart.render("{}").all(ConfigMap.class))
        .noneMatch(map -> map.getMetadata().getName().endsWith("-extra"));
  }

  @Test
  void theUpdateStrategyAndTheGracePeriodAreValues() {
    Deployment byDefault = RenderedChart.render("{}").one(Deployment.class);
    assertThat(byDefault.getSpec().getStrategy()).isNull();
    assertThat(byDefault.getSpec().getTemplate().getSpec().getTerminationGracePeriodSeconds())
        .isEqualTo(30L);

    Deployment deployment =
        RenderedChart.render(
                """
        strategy: {type: RollingUpdate, rollingUpdate: {maxUnavailable: 0, maxSurge: 1}}
        terminationGracePeriodSeconds: 45
        """)
            .one(Deployment.class);
    assertThat(
            deployment.getSpec().getStrategy().getRollingUpdate().getMaxUnavailable().getIntVal())
        .isZero();
    assertThat(deployment.getSpec().getStrategy().getRollingUpdate().getMaxSurge().getIntVal())
        .isEqualTo(1);
    assertThat(deployment.getSpec().getTemplate().getSpec().getTerminationGracePeriodSeconds())
        .isEqualTo(45L);
    assertThatThrownBy(() -> RenderedChart.template("terminationGracePeriodSeconds: 5"))
        .hasMessageContaining("terminationGracePeriodSeconds");
  }

  @Test
  void helmTestCreatesAStatusOnlyTaskUnderARoleThatMayOnlyCreateGetAndDeleteTasks() {
    RenderedChart byDefault = RenderedChart.render("{}");
    assertThat(byDefault.all(Pod.class)).isEmpty();

    RenderedChart chart =
        withHooksAsObjects(
            "test: {enabled: true, image: {repository: registry.example.com/kubectl, tag: '1.31.2'}}");
    String name = FULLNAME + "-test";
    Pod pod = chart.named(Pod.class, name);
    assertThat(pod.getMetadata().getAnnotations()).containsEntry(HOOK, "test");
    assertThat(pod.getSpec().getServiceAccountName()).isEqualTo(name);
    assertThat(pod.getSpec().getRestartPolicy()).isEqualTo("Never");
    Container test = pod.getSpec().getContainers().get(0);
    assertThat(test.getImage()).isEqualTo("registry.example.com/kubectl:1.31.2");
    assertThat(String.join(" ", test.getCommand()))
        .contains(
            "kind: DelayedTask",
            "kubectl create",
            "-o jsonpath='{.status.phase}'",
            "= Fired",
            "kubectl delete delayedtask")
        .doesNotContain("jobTemplate", "sink:");
    RestrictedPodSecurity.assertRestricted(pod.getSpec(), "helm test pod");
    assertThat(test.getSecurityContext().getReadOnlyRootFilesystem()).isTrue();

    Role role = chart.named(Role.class, name);
    assertThat(role.getMetadata().getNamespace()).isEqualTo(RenderedChart.NAMESPACE);
    assertThat(role.getRules())
        .singleElement()
        .satisfies(
            rule -> {
              assertThat(rule.getApiGroups()).containsExactly("delayedtask.io");
              assertThat(rule.getResources()).containsExactly("delayedtasks");
              assertThat(rule.getVerbs()).containsExactlyInAnyOrder("create", "get", "delete");
            });
    RoleBinding binding = chart.named(RoleBinding.class, name);
    assertThat(binding.getRoleRef().getName()).isEqualTo(name);
    assertThat(binding.getSubjects())
        .singleElement()
        .satisfies(subject -> assertThat(subject.getName()).isEqualTo(name));
    assertThat(chart.named(ServiceAccount.class, name).getMetadata().getAnnotations())
        .containsEntry(HOOK, "test");
    assertThatThrownBy(() -> RenderedChart.template("test: {enabled: true, image: {tag: ''}}"))
        .hasMessageContaining("tag");
  }

  private static final String HOOK = RenderedChart.HOOK;

  private static RenderedChart withHooksAsObjects(String valuesYaml) {
    return RenderedChart.renderWithHooks(valuesYaml, RenderedChart.NAMESPACE);
  }

  private static String image(RenderedChart chart) {
    return chart
        .one(Deployment.class)
        .getSpec()
        .getTemplate()
        .getSpec()
        .getContainers()
        .get(0)
        .getImage();
  }

  private static TopologySpreadConstraint[] constraints(RenderedChart chart) {
    return chart
        .one(Deployment.class)
        .getSpec()
        .getTemplate()
        .getSpec()
        .getTopologySpreadConstraints()
        .toArray(TopologySpreadConstraint[]::new);
  }
}
