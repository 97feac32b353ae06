package io.delayedtask.operator.deploy;

import static io.delayedtask.operator.deploy.RenderedChart.FULLNAME;
import static org.assertj.core.api.Assertions.assertThat;

import io.delayedtask.operator.config.OperatorConfig;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyEgressRule;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The plain manifests' choices are kustomize components, used from overlays that docs/install.md
 * shows and this test renders word for word with {@code kubectl kustomize}: nothing is "drop this
 * file" or "edit that line" (issue 35), and the result is what the chart renders for the same
 * choice.
 */
class KustomizeComponentsTest {

  private static final String NAME = "delayed-task-operator";

  @Test
  void theBaseRendersTheBundledRedisAndRequiresItsPassword() {
    List<HasMetadata> base = KustomizeOverlays.base();
    assertThat(base)
        .extracting(o -> o.getKind() + "/" + o.getMetadata().getName())
        .contains(
            "StatefulSet/" + NAME + "-redis",
            "Service/" + NAME + "-redis",
            "NetworkPolicy/" + NAME + "-redis")
        .doesNotContain("NetworkPolicy/" + NAME + "-egress");
    assertThat(redisPassword(base).getValueFrom().getSecretKeyRef().getOptional())
        .as("the bundled Redis' Secret is created before the install (docs/install.md)")
        .isNull();
  }

  /**
   * Issue 35: "drop 50-redis.yaml and the Secret" left a non-optional secretKeyRef
   * (CreateContainerConfigError) and a kustomization naming the file.
   */
  @Test
  void yourOwnRedisAsInstallMdShowsIt() {
    List<HasMetadata> objects = KustomizeOverlays.fromInstallMd("external-redis");
    assertThat(objects)
        .as("nothing of the bundled Redis")
        .noneMatch(o -> o.getMetadata().getName().equals(NAME + "-redis"));
    assertThat(Manifests.all(objects, StatefulSet.class)).isEmpty();
    EnvVar password = redisPassword(objects);
    assertThat(password.getValueFrom().getSecretKeyRef().getName()).isEqualTo(NAME + "-redis");
    assertThat(password.getValueFrom().getSecretKeyRef().getOptional())
        .as("a Redis without a password needs no Secret")
        .isTrue();
    Map<String, String> config = Manifests.one(objects, ConfigMap.class).getData();
    OperatorConfig parsed =
        OperatorConfig.fromEnv(
            PodEnvironment.resolve(
                config,
                Manifests.one(objects, Deployment.class)
                    .getSpec()
                    .getTemplate()
                    .getSpec()
                    .getContainers()
                    .get(0)
                    .getEnv(),
                NAME,
                NAME + "-5c7d-xyz12"));
    assertThat(parsed.redisUri()).isEqualTo("rediss://redis.example.internal:6380");
    assertThat(Manifests.all(objects, Deployment.class)).hasSize(1);
  }

  /**
   * Issue 32, finding 8: the threat model asks installers for an egress policy, and the plain
   * manifests had none. The component's, patched as install.md shows, is the chart's for the same
   * addresses, rule for rule.
   */
  @Test
  void theEgressPolicyAsInstallMdShowsItIsTheCharts() {
    NetworkPolicy plain =
        Manifests.named(
            KustomizeOverlays.fromInstallMd("with-egress"), NetworkPolicy.class, NAME + "-egress");
    NetworkPolicy chart =
        RenderedChart.render(
                """
        networkPolicy:
          egress:
            enabled: true
            apiServerCidrs: [10.0.0.1/32]
            cidrs: [10.96.0.0/12]
        """)
            .named(NetworkPolicy.class, FULLNAME + "-egress");
    assertThat(plain.getSpec().getPolicyTypes()).isEqualTo(chart.getSpec().getPolicyTypes());
    List<NetworkPolicyEgressRule> plainRules = plain.getSpec().getEgress();
    List<NetworkPolicyEgressRule> chartRules = chart.getSpec().getEgress();
    assertThat(plainRules).hasSameSizeAs(chartRules);
    assertThat(plainRules.get(0)).as("DNS").isEqualTo(chartRules.get(0));
    assertThat(plainRules.get(1))
        .as("the API server, its placeholder replaced")
        .isEqualTo(chartRules.get(1));
    assertThat(plainRules.get(2).getPorts())
        .as("the bundled Redis")
        .isEqualTo(chartRules.get(2).getPorts());
    assertThat(plainRules.get(2).getTo())
        .singleElement()
        .satisfies(
            peer ->
                assertThat(peer.getPodSelector().getMatchLabels())
                    .containsEntry("app.kubernetes.io/component", "redis"));
    assertThat(plainRules.get(3)).as("what the installer added").isEqualTo(chartRules.get(3));
    assertThat(plain.getSpec().getPodSelector().getMatchLabels())
        .containsEntry("app.kubernetes.io/component", "operator")
        .containsEntry("app.kubernetes.io/name", NAME);
  }

  /**
   * Issue 35: one way to turn the admission check off, which leaves out what the chart's leaves
   * out.
   */
  @Test
  void withoutTheAdmissionCheckAsInstallMdShowsItIsTheChartsRequiredBindingsNone() {
    List<HasMetadata> base = KustomizeOverlays.base();
    List<HasMetadata> off = KustomizeOverlays.fromInstallMd("no-admission-check");
    List<String> removed =
        base.stream()
            .map(KustomizeComponentsTest::kindAndName)
            .filter(
                o -> off.stream().map(KustomizeComponentsTest::kindAndName).noneMatch(o::equals))
            .toList();
    RenderedChart chart = RenderedChart.render("{}");
    RenderedChart chartOff = RenderedChart.render("admissionPolicy: {requiredBindings: none}");
    List<String> chartRemoved =
        chart.objects().stream()
            .map(KustomizeComponentsTest::kindAndName)
            .filter(
                o ->
                    chartOff.objects().stream()
                        .map(KustomizeComponentsTest::kindAndName)
                        .noneMatch(o::equals))
            .map(o -> o.replace(FULLNAME, NAME))
            .toList();
    assertThat(removed)
        .as("what the component leaves out is what requiredBindings=none leaves out")
        .containsExactlyInAnyOrderElementsOf(chartRemoved)
        .contains(
            "ClusterRole/" + NAME + "-admission-policy",
            "ValidatingAdmissionPolicy/" + NAME + "-author-rights");
    Container operator =
        Manifests.one(off, Deployment.class)
            .getSpec()
            .getTemplate()
            .getSpec()
            .getContainers()
            .get(0);
    Map<String, String> config = Manifests.one(off, ConfigMap.class).getData();
    assertThat(config).containsEntry(OperatorConfig.ADMISSION_POLICY, "none");
    assertThat(operator.getEnv())
        .noneMatch(e -> e.getName().equals(OperatorConfig.ADMISSION_POLICY));
    assertThat(
            OperatorConfig.fromEnv(
                    PodEnvironment.resolve(config, operator.getEnv(), NAME, NAME + "-5c7d-xyz12"))
                .checksAdmissionPolicy())
        .isFalse();
  }

  private static String kindAndName(HasMetadata o) {
    return o.getKind() + "/" + o.getMetadata().getName();
  }

  private static EnvVar redisPassword(List<HasMetadata> objects) {
    return Manifests.one(objects, Deployment.class)
        .getSpec()
        .getTemplate()
        .getSpec()
        .getContainers()
        .get(0)
        .getEnv()
        .stream()
        .filter(e -> e.getName().equals(OperatorConfig.REDIS_PASSWORD))
        .findFirst()
        .orElseThrow();
  }
}
