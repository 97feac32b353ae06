package io.delayedtask.operator.api;

import static org.assertj.core.api.Assertions.assertThat;

import io.delayedtask.operator.testing.RealKubernetes;
import io.delayedtask.operator.testing.RealKubernetes.Kubectl;
import io.delayedtask.operator.testing.RequiresRealKubernetes;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The DelayedTaskQueue CRD on a real API server: its bounds refused with a message naming the
 * field, the good specs accepted, {@code kubectl get dtq} printing the contract's columns, and
 * {@code kubectl explain dtq} its descriptions.
 */
@RequiresRealKubernetes
class QueueCrdOnRealApiServerIT {
  private static RealKubernetes kube;
  private static String ns;

  @BeforeAll
  static void start() {
    kube = RealKubernetes.shared();
    ns = kube.createNamespace("queue-crd");
  }

  static Stream<Arguments> badSpecs() {
    return Stream.of(
        Arguments.of(
            "a rate of 0",
            "maxDispatchesPerSecond: 0",
            "spec.maxDispatchesPerSecond must be greater than 0"),
        Arguments.of(
            "a negative rate", "maxDispatchesPerSecond: -1", "spec.maxDispatchesPerSecond"),
        Arguments.of(
            "a rate above 10000",
            "maxDispatchesPerSecond: 10000.5",
            "spec.maxDispatchesPerSecond must be greater than 0 and at most 10000"),
        Arguments.of("a burst of 0", "maxDispatchesPerSecond: 5\n  maxBurst: 0", "spec.maxBurst"),
        Arguments.of(
            "a burst without a rate",
            "maxBurst: 5",
            "spec.maxBurst is the size of the rate's token bucket"),
        Arguments.of(
            "a concurrency of 0", "maxConcurrentDispatches: 0", "spec.maxConcurrentDispatches"),
        Arguments.of(
            "a concurrency above 10000",
            "maxConcurrentDispatches: 10001",
            "spec.maxConcurrentDispatches"),
        Arguments.of("a paused that is no boolean", "paused: maybe", "spec.paused"));
  }

  @ParameterizedTest(name = "{0} is refused")
  @MethodSource("badSpecs")
  void theApiServerRefusesBadQueuesNamingTheField(String what, String spec, String message) {
    Kubectl.Result result = apply(manifest("bad", spec));
    assertThat(result.ok()).as(result.output()).isFalse();
    assertThat(result.stderr()).contains(message);
  }

  @Test
  void theBoundsThemselvesAreAccepted() {
    for (String spec :
        new String[] {
          "maxDispatchesPerSecond: 0.001",
          "maxDispatchesPerSecond: 10000",
          "maxDispatchesPerSecond: 0.5\n  maxBurst: 1",
          "maxConcurrentDispatches: 1",
          "maxConcurrentDispatches: 10000",
          "paused: true",
          "{}"
        }) {
      Kubectl.Result result = apply(manifest("good", spec), "--dry-run=server");
      assertThat(result.ok()).as(spec + ": " + result.output()).isTrue();
    }
  }

  @Test
  void kubectlGetDtqPrintsPausedRateConcurrencyWaitingInFlightAge() {
    Kubectl.Result applied =
        apply(
            manifest(
                "emails",
                "maxDispatchesPerSecond: 20\n  maxBurst: 40\n  maxConcurrentDispatches: 10\n  paused: true"));
    assertThat(applied.ok()).as(applied.output()).isTrue();
    Kubectl.Result status =
        kube.kubectl(
            "patch",
            "dtq",
            "emails",
            "-n",
            ns,
            "--subresource=status",
            "--type=merge",
            "-p",
            "{\"status\":{\"waiting\":7,\"inFlight\":3}}");
    assertThat(status.ok()).as(status.output()).isTrue();

    Kubectl.Result get = kube.kubectl("get", "dtq", "-n", ns);
    assertThat(get.ok()).as(get.output()).isTrue();
    List<String> lines = get.stdout().lines().toList();
    assertThat(lines.get(0).trim().split("\\s+"))
        .containsExactly("NAME", "PAUSED", "RATE", "CONCURRENCY", "WAITING", "IN-FLIGHT", "AGE");
    assertThat(lines.get(1).trim().split("\\s+"))
        .startsWith("emails", "true", "20", "10", "7", "3");
  }

  @Test
  void kubectlExplainDescribesTheQueueAndTheTasksQueueField() {
    // The API server publishes a new CRD's OpenAPI a little after it serves it.
    assertThat(explained("dtq.spec.maxBurst")).contains("token bucket");
    assertThat(explained("dt.spec.queue")).contains("DelayedTaskQueue");
  }

  private static String explained(String field) {
    java.util.concurrent.atomic.AtomicReference<Kubectl.Result> result =
        new java.util.concurrent.atomic.AtomicReference<>();
    org.awaitility.Awaitility.await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () -> {
              result.set(kube.kubectl("explain", field));
              return result.get().ok();
            });
    return result.get().stdout();
  }

  private Kubectl.Result apply(String manifest, String... flags) {
    String[] args =
        Stream.concat(Stream.of("apply", "-n", ns, "-f", "-"), Stream.of(flags))
            .toArray(String[]::new);
    return kube.kubectl(kube.kubeconfig()).run(Duration.ofSeconds(60), manifest, args);
  }

  private static String manifest(String name, String spec) {
    return """
        apiVersion: delayedtask.io/v1alpha1
        kind: DelayedTaskQueue
        metadata:
          name: %s
        spec:
          %s
        """
        .formatted(name, spec);
  }
}
