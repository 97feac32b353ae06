package io.delayedtask.operator.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.delayedtask.operator.testing.RealKubernetes;
import io.delayedtask.operator.testing.RequiresRealKubernetes;
import io.fabric8.kubernetes.api.model.Capabilities;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.SecurityContext;
import io.fabric8.kubernetes.api.model.VolumeBuilder;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Pod Security Admission of a real API server judges the pods the chart's Deployment and bundled
 * Redis StatefulSet would create: admitted (server-side dry run) in a namespace that enforces
 * "restricted", and refused there, with PodSecurity's message, as soon as one setting is weakened.
 * The same weakened pod is admitted where nothing is enforced, so the refusal is Pod Security's.
 */
@RequiresRealKubernetes
class PodSecurityIT {
  private static final String VIOLATES = "violates PodSecurity \"restricted:latest\"";

  private static KubernetesClient client;
  private static String restricted;
  private static String unenforced;
  private static RenderedChart chart;

  @BeforeAll
  static void start() {
    RealKubernetes kube = RealKubernetes.shared();
    client = kube.client();
    restricted =
        kube.createNamespace(
            "restricted", Map.of("pod-security.kubernetes.io/enforce", "restricted"));
    unenforced = kube.createNamespace("unenforced");
    chart = RenderedChart.render("{}");
  }

  /** The chart's two pod templates, each a pod as its controller would create it. */
  enum Workload {
    OPERATOR {
      @Override
      Pod pod() {
        return podOf(chart.one(Deployment.class).getSpec().getTemplate(), "operator-0");
      }
    },
    REDIS {
      @Override
      Pod pod() {
        StatefulSet redis = chart.named(StatefulSet.class, RenderedChart.FULLNAME + "-redis");
        Pod pod = podOf(redis.getSpec().getTemplate(), "redis-0");
        // The StatefulSet controller turns each volumeClaimTemplate into a PVC volume of the pod.
        if (pod.getSpec().getVolumes() == null) {
          pod.getSpec().setVolumes(new ArrayList<>());
        }
        redis
            .getSpec()
            .getVolumeClaimTemplates()
            .forEach(
                claim ->
                    pod.getSpec()
                        .getVolumes()
                        .add(
                            new VolumeBuilder()
                                .withName(claim.getMetadata().getName())
                                .withNewPersistentVolumeClaim(
                                    claim.getMetadata().getName()
                                        + "-"
                                        + redis.getMetadata().getName()
                                        + "-0",
                                    false)
                                .build()));
        return pod;
      }
    };

    abstract Pod pod();
  }

  @ParameterizedTest(name = "the {0} pod is admitted where restricted is enforced")
  @MethodSource("workloads")
  void theChartsPodIsAdmittedWhereRestrictedIsEnforced(Workload workload) {
    Pod admitted = client.pods().inNamespace(restricted).resource(workload.pod()).dryRun().create();
    assertThat(admitted.getMetadata().getNamespace()).isEqualTo(restricted);
    assertThat(client.pods().inNamespace(restricted).list().getItems())
        .as("a dry run stores nothing")
        .isEmpty();
  }

  static Stream<Workload> workloads() {
    return Stream.of(Workload.values());
  }

  static Stream<Arguments> weakenings() {
    return Stream.of(Workload.values())
        .flatMap(
            workload ->
                Stream.of(
                    Arguments.of(
                        workload,
                        "pod runAsNonRoot: false",
                        weaken(pod -> pod.getSecurityContext().setRunAsNonRoot(false)),
                        "runAsNonRoot != true",
                        "pod must not set securityContext.runAsNonRoot=false"),
                    Arguments.of(
                        workload,
                        "container runAsNonRoot: false",
                        weakenContainer(c -> c.setRunAsNonRoot(false)),
                        "runAsNonRoot != true",
                        "must not set securityContext.runAsNonRoot=false"),
                    Arguments.of(
                        workload,
                        "runAsUser: 0",
                        weakenContainer(c -> c.setRunAsUser(0L)),
                        "runAsUser=0",
                        "must not set runAsUser=0"),
                    Arguments.of(
                        workload,
                        "allowPrivilegeEscalation: true",
                        weakenContainer(c -> c.setAllowPrivilegeEscalation(true)),
                        "allowPrivilegeEscalation != false",
                        "must set securityContext.allowPrivilegeEscalation=false"),
                    Arguments.of(
                        workload,
                        "capabilities.drop removed",
                        weakenContainer(c -> c.getCapabilities().setDrop(List.of())),
                        "unrestricted capabilities",
                        "must set securityContext.capabilities.drop=[\"ALL\"]"),
                    Arguments.of(
                        workload,
                        "NET_RAW added back",
                        weakenContainer(
                            c ->
                                c.setCapabilities(
                                    new Capabilities(List.of("NET_RAW"), List.of("ALL")))),
                        "unrestricted capabilities",
                        "must not include \"NET_RAW\" in securityContext.capabilities.add"),
                    Arguments.of(
                        workload,
                        "seccompProfile removed",
                        weaken(
                            pod -> {
                              pod.getSecurityContext().setSeccompProfile(null);
                              pod.getContainers()
                                  .forEach(c -> c.getSecurityContext().setSeccompProfile(null));
                            }),
                        "seccompProfile",
                        "must set securityContext.seccompProfile.type to \"RuntimeDefault\" or \"Localhost\"")));
  }

  @ParameterizedTest(name = "the {0} pod with {1} is refused")
  @MethodSource("weakenings")
  void oneWeakenedSettingIsRefusedWithPodSecuritysMessage(
      Workload workload, String what, Consumer<PodSpec> weaken, String check, String detail) {
    Pod pod = workload.pod();
    weaken.accept(pod.getSpec());

    assertThatThrownBy(() -> client.pods().inNamespace(restricted).resource(pod).dryRun().create())
        .as(what)
        .isInstanceOfSatisfying(
            KubernetesClientException.class,
            e -> {
              assertThat(e.getCode()).isEqualTo(403);
              assertThat(e.getMessage()).contains(VIOLATES, check, detail);
            });
    Pod elsewhere = client.pods().inNamespace(unenforced).resource(pod).dryRun().create();
    assertThat(elsewhere.getMetadata().getName())
        .as("admitted where nothing is enforced")
        .isNotNull();
  }

  @Test
  void theNamespaceReallyEnforcesRestricted() {
    assertThat(client.namespaces().withName(restricted).get().getMetadata().getLabels())
        .containsEntry("pod-security.kubernetes.io/enforce", "restricted");
    assertThat(client.namespaces().withName(unenforced).get().getMetadata().getLabels())
        .doesNotContainKey("pod-security.kubernetes.io/enforce");
  }

  private static Pod podOf(PodTemplateSpec template, String name) {
    PodTemplateSpec copy = Manifests.SERIALIZATION.clone(template);
    return new PodBuilder()
        .withNewMetadata()
        .withName(name)
        .withLabels(copy.getMetadata().getLabels())
        .endMetadata()
        .withSpec(copy.getSpec())
        .build();
  }

  private static Consumer<PodSpec> weaken(Consumer<PodSpec> change) {
    return change;
  }

  /** Weakens the first (only) container's security context. */
  private static Consumer<PodSpec> weakenContainer(Consumer<SecurityContext> change) {
    return pod -> change.accept(pod.getContainers().get(0).getSecurityContext());
  }
}
