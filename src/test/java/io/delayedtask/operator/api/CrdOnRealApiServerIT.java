package io.delayedtask.operator.api;

import static org.assertj.core.api.Assertions.assertThat;

import io.delayedtask.operator.testing.DelayedTaskCrd;
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
 * What only a real API server can say about the CRD: it is accepted (CEL cost estimates included)
 * without warnings, its CEL rules and schema refuse bad manifests with the rule's own message
 * (through kubectl with validation on, and through server-side apply), and {@code kubectl get dt}
 * prints the printer columns in the contract's order.
 */
@RequiresRealKubernetes
class CrdOnRealApiServerIT {
  private static RealKubernetes kube;
  private static String ns;

  @BeforeAll
  static void start() {
    kube = RealKubernetes.shared();
    ns = kube.createNamespace("crd");
  }

  @Test
  void theCommittedCrdIsAcceptedWithoutWarningsByClientAndServerSideApply() {
    Kubectl.Result clientSide = kube.kubectl("apply", "-f", DelayedTaskCrd.FILE.toString());
    assertThat(clientSide.ok()).as(clientSide.output()).isTrue();
    assertThat(clientSide.stderr())
        .as("warnings from the API server")
        .doesNotContainIgnoringCase("warning");

    Kubectl.Result serverSide =
        kube.kubectl(
            "apply", "--server-side", "--force-conflicts", "-f", DelayedTaskCrd.FILE.toString());
    assertThat(serverSide.ok()).as(serverSide.output()).isTrue();
    assertThat(serverSide.stderr()).doesNotContainIgnoringCase("warning");
  }

  static Stream<Arguments> badSpecs() {
    return Stream.of(
        Arguments.of(
            "both runAt and delay",
            "runAt: \"2026-12-03T07:00:00Z\"\n  delay: 10m",
            "set exactly one of spec.runAt"),
        Arguments.of("neither runAt nor delay", "suspend: true", "set exactly one of spec.runAt"),
        Arguments.of(
            "a malformed delay",
            "delay: ten minutes",
            "spec.delay must be a non-negative duration"),
        Arguments.of(
            "a negative delay", "delay: -5m", "spec.delay must be a non-negative duration"),
        Arguments.of(
            "a malformed runAt", "runAt: next tuesday", "spec.runAt must be an RFC 3339 time"),
        Arguments.of("an over-long delay", "delay: " + "1".repeat(65) + "s", "spec.delay"),
        // 65 characters: refused by maxLength (64), whatever the RFC 3339 rule would say.
        Arguments.of(
            "an over-long runAt",
            "runAt: \"2026-12-03T07:00:00." + "0".repeat(44) + "Z\"",
            "spec.runAt: Too long"),
        Arguments.of(
            "a negative deadline",
            "delay: 10m\n  startingDeadlineSeconds: -1",
            "spec.startingDeadlineSeconds"),
        Arguments.of(
            "a runAt without offset and no timeZone",
            "runAt: \"2026-12-03T07:00:00\"",
            "spec.runAt has no offset"),
        Arguments.of(
            "a timeZone that is not a zone name",
            "runAt: \"2026-12-03T07:00:00\"\n  timeZone: \"not a zone\"",
            "spec.timeZone"),
        Arguments.of("an unknown field", "delay: 10m\n  delaySeconds: 600", "spec.delaySeconds"),
        Arguments.of(
            "both a jobTemplate and a sink",
            "delay: 10m\n  jobTemplate: "
                + JOB_TEMPLATE
                + "\n  sink: {uri: \"https://hooks.example.com/due\"}",
            "set at most one of spec.jobTemplate (run a Job) and spec.sink"),
        Arguments.of(
            "delivery without a sink",
            "delay: 10m\n  delivery: {retry: 2}",
            "spec.delivery applies only to spec.sink; add spec.sink or remove spec.delivery"),
        Arguments.of(
            "a sink ref to a core kind other than Service",
            "delay: 10m\n  sink: {ref: {apiVersion: v1, kind: ConfigMap, name: orders}}",
            "sink.ref must name a Service (apiVersion: v1, kind: Service) or a Knative Addressable"),
        Arguments.of(
            "a sink ref whose apiVersion is no group/version",
            "delay: 10m\n  sink: {ref: {apiVersion: serving.knative.dev, kind: Service, name: orders}}",
            "sink.ref must name a Service (apiVersion: v1, kind: Service) or a Knative Addressable"),
        Arguments.of(
            "a sink ref whose name is no DNS label",
            "delay: 10m\n  sink: {ref: {apiVersion: v1, kind: Service, name: orders.payments}}",
            "spec.sink.ref.name"),
        Arguments.of(
            "a sink with neither ref nor uri",
            "delay: 10m\n  sink: {audience: orders}",
            "set ref (a Service in this namespace) or uri"),
        Arguments.of(
            "a sink ref with an absolute uri",
            "delay: 10m\n  sink: {ref: {apiVersion: v1, kind: Service, name: orders}, uri: \"http://orders/cancel\"}",
            "with ref, uri is the path on the Service"),
        Arguments.of(
            "a relative sink uri without ref",
            "delay: 10m\n  sink: {uri: /orders/cancel}",
            "without ref, uri must be an absolute http:// or https:// URL"),
        Arguments.of(
            "a dead-letter sink with an audience",
            "delay: 10m\n  sink: {uri: \"https://hooks.example.com/due\"}"
                + "\n  delivery: {deadLetterSink: {uri: \"https://hooks.example.com/dead\", audience: hooks}}",
            "spec.delivery.deadLetterSink takes no audience"),
        Arguments.of(
            "an over-long sink uri",
            "delay: 10m\n  sink: {uri: \"https://hooks.example.com/" + "x".repeat(2048) + "\"}",
            "spec.sink.uri"),
        Arguments.of(
            "a retry count above 100",
            "delay: 10m\n  sink: {uri: \"https://hooks.example.com/due\"}"
                + "\n  delivery: {retry: 101}",
            "spec.delivery.retry"),
        Arguments.of(
            "a deadline above 10 years",
            "delay: 10m\n  startingDeadlineSeconds: 315360001",
            "spec.startingDeadlineSeconds"),
        Arguments.of(
            "a deadline that overflowed the operator's times",
            "delay: 10m\n  startingDeadlineSeconds: 40000000000000000",
            "spec.startingDeadlineSeconds"),
        Arguments.of(
            "a TTL above 10 years",
            "delay: 10m\n  ttlSecondsAfterFinished: 315360001",
            "spec.ttlSecondsAfterFinished"),
        Arguments.of(
            "65 payload keys", "delay: 10m\n  payload: " + payload(65, 1, 4), "spec.payload"),
        Arguments.of(
            "a payload value of 4097 characters",
            "delay: 10m\n  payload: {big: " + "x".repeat(4097) + "}",
            "spec.payload values are at most 4096 characters"),
        Arguments.of(
            "a payload key of 56 characters",
            "delay: 10m\n  payload: {" + "k".repeat(56) + ": x}",
            "spec.payload keys become the annotation delayedtask.io/payload.<key>"),
        Arguments.of(
            "a backoffDelay of 0s",
            "delay: 10m\n  sink: {uri: \"https://hooks.example.com/due\"}"
                + "\n  delivery: {backoffDelay: 0s}",
            "spec.delivery.backoffDelay must be at least 100ms"),
        Arguments.of(
            "a backoffDelay of 99ms",
            "delay: 10m\n  sink: {uri: \"https://hooks.example.com/due\"}"
                + "\n  delivery: {backoffDelay: 99ms}",
            "spec.delivery.backoffDelay must be at least 100ms"),
        Arguments.of(
            "a payload key that is no annotation name",
            "delay: 10m\n  payload: {\"bad key!\": x}",
            "spec.payload keys become the annotation delayedtask.io/payload.<key>"),
        Arguments.of(
            "data without a sink",
            "delay: 10m\n  data: '{}'",
            "spec.data is the body of a sink's request and applies only to spec.sink"),
        Arguments.of(
            "a contentType without data",
            "delay: 10m\n  sink: {uri: \"https://hooks.example.com/due\"}"
                + "\n  contentType: text/plain",
            "spec.contentType is the Content-Type of spec.data and applies only with"),
        Arguments.of(
            "ceOverrides without a sink",
            "delay: 10m\n  ceOverrides: {extensions: {team: orders}}",
            "spec.ceOverrides adds CloudEvents attributes to a sink's request and applies only to spec.sink"),
        Arguments.of(
            "a contentType that is no media type",
            SINK + "\n  data: x\n  contentType: plain text",
            "spec.contentType must be a media type"),
        Arguments.of(
            "an over-long data",
            SINK + "\n  contentType: text/plain\n  data: " + "x".repeat(65_537),
            "spec.data"),
        Arguments.of(
            "an extension name with capitals",
            SINK + "\n  ceOverrides: {extensions: {Team: orders}}",
            "spec.ceOverrides.extensions: a name is 1 to 20 lowercase letters or digits"),
        Arguments.of(
            "an extension name of 21 characters",
            SINK + "\n  ceOverrides: {extensions: {" + "a".repeat(21) + ": x}}",
            "spec.ceOverrides.extensions: a name is 1 to 20 lowercase letters or digits"),
        Arguments.of(
            "an extension named like a CloudEvents attribute",
            SINK + "\n  ceOverrides: {extensions: {source: x}}",
            "are CloudEvents attributes the operator sets"),
        Arguments.of(
            "an extension in the operator's prefix",
            SINK + "\n  ceOverrides: {extensions: {delayedtaskattempt: \"9\"}}",
            "spec.ceOverrides.extensions: names beginning with delayedtask are the operator's own"),
        Arguments.of(
            "a queue name that is no DNS label",
            "delay: 10m\n  queue: Emails_Fast",
            "spec.queue must name a DelayedTaskQueue of the task's namespace: a DNS label"),
        Arguments.of(
            "an extension value of 257 characters",
            SINK + "\n  ceOverrides: {extensions: {team: " + "x".repeat(257) + "}}",
            "spec.ceOverrides.extensions: a value is at most 256 characters"));
  }

  /**
   * A flow-style YAML map of {@code keys} entries, keys of {@code keyLength} characters, values of
   * {@code valueLength}.
   */
  static String payload(int keys, int valueLength, int keyLength) {
    StringBuilder map = new StringBuilder("{");
    for (int i = 0; i < keys; i++) {
      String number = Integer.toString(i);
      map.append(i == 0 ? "" : ", ")
          .append("k".repeat(keyLength - number.length()))
          .append(number)
          .append(": ")
          .append("v".repeat(valueLength));
    }
    return map.append('}').toString();
  }

  private static final String SINK = "delay: 10m\n  sink: {uri: \"https://hooks.example.com/due\"}";

  private static final String JOB_TEMPLATE =
      "{spec: {template: {spec: {restartPolicy: Never, containers: [{name: run, image: busybox}]}}}}";

  @ParameterizedTest(name = "{0} is refused by kubectl apply")
  @MethodSource("badSpecs")
  void kubectlApplyWithValidationRefusesBadSpecsWithTheRulesMessage(
      String what, String spec, String message) {
    Kubectl.Result result = apply(manifest("bad-csa", spec));
    assertThat(result.ok()).as(result.output()).isFalse();
    assertThat(result.stderr()).contains(message);
    if (what.equals("an unknown field")) {
      assertThat(result.stderr()).contains("unknown field \"spec.delaySeconds\"");
    }
  }

  @ParameterizedTest(name = "{0} is refused by server-side apply")
  @MethodSource("badSpecs")
  void serverSideApplyRefusesBadSpecsWithTheRulesMessage(String what, String spec, String message) {
    Kubectl.Result result = apply(manifest("bad-ssa", spec), "--server-side");
    assertThat(result.ok()).as(result.output()).isFalse();
    assertThat(result.stderr()).contains(message);
    if (what.equals("an unknown field")) {
      assertThat(result.stderr()).contains("field not declared in schema");
    }
  }

  @Test
  void goodSpecsAreAccepted() {
    for (String spec :
        new String[] {
          "delay: 1h30m",
          "delay: PT10M",
          "delay: 1.5h",
          "delay: 500ms",
          "runAt: \"2026-12-03T08:00:00.5+01:00\"",
          "runAt: \"2026-12-03T07:00:00Z\"",
          "runAt: \"2027-03-28T02:30:00\"\n  timeZone: Europe/Berlin",
          "runAt: \"2026-12-03T07:00:00-05:00\"\n  timeZone: America/New_York",
          "delay: 10m\n  timeZone: Etc/UTC",
          "delay: 10m\n  jobTemplate: " + JOB_TEMPLATE,
          "delay: 10m\n  sink: {ref: {apiVersion: v1, kind: Service, name: orders}, uri: /orders/cancel, audience: orders}"
              + "\n  delivery: {retry: 5, backoffPolicy: exponential, backoffDelay: 1s, timeout: 10s,"
              + " deadLetterSink: {uri: \"https://hooks.example.com/dead\"}}",
          "delay: 10m\n  sink: {uri: \"https://hooks.example.com/due\"}",
          "delay: 10m\n  sink: {ref: {apiVersion: serving.knative.dev/v1, kind: Service, name: orders}, uri: /cancel}",
          "delay: 10m\n  sink: {ref: {apiVersion: eventing.knative.dev/v1, kind: Broker, name: default}}"
              + "\n  ceOverrides: {extensions: {team: orders}}",
          SINK + "\n  data: '{\"orderId\": 42, \"items\": [1, 2]}'",
          SINK + "\n  data: '<order id=\"42\"/>'\n  contentType: application/xml",
          SINK + "\n  data: x\n  contentType: \"text/plain; charset=utf-8\"",
          SINK + "\n  contentType: text/plain\n  data: " + "x".repeat(65_536),
          SINK
              + "\n  ceOverrides: {extensions: {team: orders, "
              + "a".repeat(20)
              + ": "
              + "x".repeat(256)
              + ", region2: \"\"}}",
          "delay: 10m\n  sink: {uri: \"https://hooks.example.com/due\"}\n  delivery: {backoffDelay: 100ms}",
          "delay: 10m\n  sink: {uri: \"https://hooks.example.com/due\"}\n  delivery: {backoffDelay: 1.5h}",
          "delay: 10m\n  queue: emails-" + "x".repeat(56)
        }) {
      Kubectl.Result result = apply(manifest("good", spec), "--dry-run=server");
      assertThat(result.ok()).as(spec + ": " + result.output()).isTrue();
    }
  }

  /**
   * The largest payload and the longest deadline and TTL pass the schema and its CEL rules.
   * Server-side apply: a client-side apply copies the whole task into its last-applied annotation,
   * and the annotations of an object are at most 256 KiB, less than this payload (docs/reference.md
   * says so).
   */
  @Test
  void theLargestPayloadAndTheLongestDeadlineAndTtlAreAccepted() {
    Kubectl.Result result =
        apply(
            manifest(
                "largest",
                "delay: 10m\n  startingDeadlineSeconds: 315360000"
                    + "\n  ttlSecondsAfterFinished: 315360000\n  payload: "
                    + payload(64, 4096, 55)),
            "--server-side",
            "--dry-run=server");
    assertThat(result.ok()).as(result.output()).isTrue();
  }

  @Test
  void kubectlGetPrintsNamePhaseDueJobAge() {
    Kubectl.Result applied =
        apply(manifest("columns", "runAt: \"2099-01-01T00:00:00Z\"\n  suspend: true"));
    assertThat(applied.ok()).as(applied.output()).isTrue();

    Kubectl.Result get = kube.kubectl("get", "dt", "-n", ns);
    assertThat(get.ok()).as(get.output()).isTrue();
    String header = get.stdout().lines().findFirst().orElse("");
    assertThat(header.trim().split("\\s+")).containsExactly("NAME", "PHASE", "DUE", "JOB", "AGE");
    assertThat(kube.kubectl("get", "delayedtasks.delayedtask.io", "-n", ns, "columns").ok())
        .isTrue();
  }

  @Test
  void kubectlGetWideAddsTheAttemptsAndTheSinkUri() {
    Kubectl.Result applied =
        apply(
            manifest(
                "wide",
                "runAt: \"2099-01-01T00:00:00Z\"\n  suspend: true"
                    + "\n  sink: {uri: \"https://hooks.example.com/due\"}"));
    assertThat(applied.ok()).as(applied.output()).isTrue();
    Kubectl.Result patched =
        kube.kubectl(
            "patch",
            "dt",
            "wide",
            "-n",
            ns,
            "--subresource=status",
            "--type=merge",
            "-p",
            "{\"status\":{\"phase\":\"Running\",\"sinkUri\":\"https://hooks.example.com/due\","
                + "\"delivery\":{\"attempts\":2}}}");
    assertThat(patched.ok()).as(patched.output()).isTrue();

    Kubectl.Result wide = kube.kubectl("get", "dt", "wide", "-n", ns, "-o", "wide");
    assertThat(wide.ok()).as(wide.output()).isTrue();
    List<String> lines = wide.stdout().lines().toList();
    assertThat(lines.get(0).trim().split("\\s+"))
        .containsExactly("NAME", "PHASE", "DUE", "JOB", "AGE", "ATTEMPTS", "SINK");
    assertThat(lines.get(1)).contains(" 2 ").endsWith("https://hooks.example.com/due");
    Kubectl.Result plain = kube.kubectl("get", "dt", "wide", "-n", ns);
    assertThat(plain.stdout())
        .as("priority 1: only with -o wide")
        .doesNotContain("SINK")
        .doesNotContain("hooks.example.com");
  }

  /**
   * status.conditions is a map list keyed by type: one condition per type, and every condition has
   * one.
   */
  @Test
  void statusConditionsTakeOneConditionPerTypeAndEachNeedsAType() {
    Kubectl.Result applied =
        apply(manifest("conditions", "runAt: \"2099-01-01T00:00:00Z\"\n  suspend: true"));
    assertThat(applied.ok()).as(applied.output()).isTrue();
    String ready =
        "{\"type\":\"Ready\",\"status\":\"True\",\"reason\":\"Suspended\","
            + "\"lastTransitionTime\":\"2026-12-04T00:00:00Z\"}";
    String scheduled =
        "{\"type\":\"Scheduled\",\"status\":\"False\",\"reason\":\"Suspended\","
            + "\"lastTransitionTime\":\"2026-12-04T00:00:00Z\"}";

    Kubectl.Result twoOfOneType =
        patchConditions("conditions", ready + "," + ready.replace("True", "False"));
    assertThat(twoOfOneType.ok()).as(twoOfOneType.output()).isFalse();
    assertThat(twoOfOneType.output()).contains("status.conditions[1]", "Duplicate value", "Ready");

    Kubectl.Result withoutType = patchConditions("conditions", "{\"status\":\"True\"}");
    assertThat(withoutType.ok()).as(withoutType.output()).isFalse();
    assertThat(withoutType.output()).contains("status.conditions[0].type", "Required value");

    Kubectl.Result onePerType = patchConditions("conditions", scheduled + "," + ready);
    assertThat(onePerType.ok()).as(onePerType.output()).isTrue();
    Kubectl.Result types =
        kube.kubectl(
            "get", "dt", "conditions", "-n", ns, "-o", "jsonpath={.status.conditions[*].type}");
    assertThat(types.stdout()).isEqualTo("Scheduled Ready");
  }

  private Kubectl.Result patchConditions(String name, String conditions) {
    return kube.kubectl(
        "patch",
        "dt",
        name,
        "-n",
        ns,
        "--subresource=status",
        "--type=merge",
        "-p",
        "{\"status\":{\"conditions\":[" + conditions + "]}}");
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
        kind: DelayedTask
        metadata:
          name: %s
        spec:
          %s
        """
        .formatted(name, spec);
  }
}
