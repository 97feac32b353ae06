package io.delayedtask.operator.sink;

import static io.delayedtask.operator.testing.Tasks.create;
import static io.delayedtask.operator.testing.Tasks.phase;
import static io.delayedtask.operator.testing.Tasks.rfc3339;
import static io.delayedtask.operator.testing.Tasks.task;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.DeliverySpec;
import io.delayedtask.operator.api.v1alpha1.Destination;
import io.delayedtask.operator.api.v1alpha1.Phase;
import io.delayedtask.operator.config.SinkConfig;
import io.delayedtask.operator.task.job.JobNames;
import io.delayedtask.operator.task.job.TaskTrace;
import io.delayedtask.operator.testing.Events;
import io.delayedtask.operator.testing.OperatorFixture;
import io.delayedtask.operator.testing.OtlpReceiver;
import io.delayedtask.operator.testing.RealKubernetes;
import io.delayedtask.operator.testing.Receiver;
import io.delayedtask.operator.testing.Receiver.Answer;
import io.delayedtask.operator.testing.RequiresRealKubernetes;
import io.delayedtask.operator.testing.Tasks;
import io.delayedtask.operator.trace.Tracing;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Trace context end to end: the operator, on a real API server and Redis, exports its spans to an
 * OTLP/HTTP endpoint this test runs on 127.0.0.1 ({@link OtlpReceiver}, which decodes them with
 * OpenTelemetry's own protocol types); the receiver's traceparent headers, the Job's TRACEPARENT
 * and the annotation name the same trace as the spans.
 */
@RequiresRealKubernetes
class TracingIT {
  private static final Duration TIMEOUT = Duration.ofSeconds(30);
  private static final String TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";

  private static KubernetesClient client;
  private static OperatorFixture.OnRealKubernetes world;
  private static String ns;
  private static Receiver receiver;
  private static OtlpReceiver otlp;

  @BeforeAll
  static void start() {
    receiver = Receiver.start();
    otlp = OtlpReceiver.start();
    RealKubernetes kube = RealKubernetes.shared();
    client = kube.client();
    world =
        OperatorFixture.startOnRealKubernetes(
            kube,
            "tracing",
            Map.of(
                SinkConfig.ALLOWED_URIS,
                receiver.base(),
                "OTEL_EXPORTER_OTLP_ENDPOINT",
                otlp.endpoint(),
                "OTEL_BSP_SCHEDULE_DELAY",
                "100",
                "OTEL_SERVICE_NAME",
                "tracing-it"));
    ns = world.namespace();
  }

  @AfterAll
  static void stop() {
    if (world != null) {
      world.close();
    }
    if (receiver != null) {
      receiver.close();
    }
    if (otlp != null) {
      otlp.close();
    }
  }

  @Test
  void eachAttemptIsASpanOfTheAnnotationsTraceAndTheReceiverSeesItsId() {
    receiver.answer("/traced", Answer.status(503), Answer.status(200));
    DelayedTask task =
        task(
            ns,
            "traced",
            s -> {
              s.setRunAt(rfc3339(Instant.now()));
              Destination sink = new Destination();
              sink.setUri(receiver.base() + "/traced");
              s.setSink(sink);
              DeliverySpec delivery = new DeliverySpec();
              delivery.setRetry(1);
              delivery.setBackoffDelay("100ms");
              s.setDelivery(delivery);
            });
    task.getMetadata()
        .setAnnotations(
            Map.of(
                TaskTrace.TRACEPARENT_ANNOTATION,
                "00-" + TRACE_ID + "-00f067aa0ba902b7-01",
                TaskTrace.TRACESTATE_ANNOTATION,
                "vendor=abc"));
    String uid = create(client, task).getMetadata().getUid();

    await()
        .atMost(TIMEOUT)
        .until(() -> phase(client, ns, "traced").orElse(null) == Phase.Succeeded);
    List<Receiver.Request> requests = receiver.requestsTo("/traced");
    assertThat(requests).hasSize(2);
    List<String> parents = requests.stream().map(r -> r.header("traceparent")).toList();
    assertThat(parents).allMatch(p -> p.matches("00-" + TRACE_ID + "-[0-9a-f]{16}-01"));
    assertThat(parents.get(0)).isNotEqualTo(parents.get(1));
    assertThat(requests).allMatch(r -> "vendor=abc".equals(r.header("tracestate")));

    await()
        .atMost(TIMEOUT)
        .until(
            () ->
                otlp.spans(Tracing.DELIVER).stream()
                            .filter(s -> uid.equals(s.attribute("delayedtask.uid")))
                            .count()
                        == 2
                    && otlp.spans(Tracing.FIRE).stream()
                        .anyMatch(s -> uid.equals(s.attribute("delayedtask.uid"))));
    var fire =
        otlp.spans(Tracing.FIRE).stream()
            .filter(s -> uid.equals(s.attribute("delayedtask.uid")))
            .toList();
    assertThat(fire).hasSize(1);
    assertThat(fire.get(0).traceId()).isEqualTo(TRACE_ID);
    assertThat(fire.get(0).parentSpanId()).isEqualTo("00f067aa0ba902b7");
    assertThat(fire.get(0).serviceName()).isEqualTo("tracing-it");
    assertThat(fire.get(0).attributes())
        .containsEntry("delayedtask.kind", "sink")
        .containsEntry("delayedtask.namespace", ns)
        .containsEntry("delayedtask.name", "traced")
        .containsKeys("delayedtask.due_time", "delayedtask.lag_ms", "delayedtask.outcome");
    var deliveries =
        otlp.spans(Tracing.DELIVER).stream()
            .filter(s -> uid.equals(s.attribute("delayedtask.uid")))
            .toList();
    assertThat(deliveries)
        .allSatisfy(
            span -> {
              assertThat(span.traceId()).isEqualTo(TRACE_ID);
              assertThat(span.parentSpanId()).isEqualTo(fire.get(0).spanId());
              assertThat(span.attribute("url.full")).isEqualTo(receiver.base() + "/traced");
            });
    assertThat(deliveries)
        .extracting(span -> "00-" + TRACE_ID + "-" + span.spanId() + "-01")
        .containsExactlyInAnyOrderElementsOf(parents);
    assertThat(deliveries)
        .extracting(span -> span.attribute("http.response.status_code"))
        .containsExactlyInAnyOrder("503", "200");
  }

  @Test
  void anInvalidAnnotationGetsOneWarningAndTheJobANewTraceInItsEnvironment() {
    Instant due = Instant.now().plusMillis(500).truncatedTo(ChronoUnit.MILLIS);
    DelayedTask task = Tasks.withJob(ns, "bad-parent", due);
    task.getMetadata()
        .setAnnotations(Map.of(TaskTrace.TRACEPARENT_ANNOTATION, "not-a-traceparent"));
    String uid = create(client, task).getMetadata().getUid();

    String jobName = JobNames.jobName("bad-parent", uid, due);
    await()
        .atMost(TIMEOUT)
        .until(() -> client.batch().v1().jobs().inNamespace(ns).withName(jobName).get() != null);
    Job job = client.batch().v1().jobs().inNamespace(ns).withName(jobName).get();
    List<EnvVar> env = job.getSpec().getTemplate().getSpec().getContainers().get(0).getEnv();
    String traceparent =
        env.stream()
            .filter(v -> v.getName().equals("TRACEPARENT"))
            .findFirst()
            .orElseThrow()
            .getValue();
    assertThat(traceparent).matches("00-[0-9a-f]{32}-[0-9a-f]{16}-01").doesNotContain(TRACE_ID);

    await()
        .atMost(TIMEOUT)
        .until(
            () ->
                Events.count(client, ns, "bad-parent", "InvalidTraceparent") >= 1
                    && otlp.spans(Tracing.FIRE).stream()
                        .anyMatch(s -> uid.equals(s.attribute("delayedtask.uid"))));
    var fire =
        otlp.spans(Tracing.FIRE).stream()
            .filter(s -> uid.equals(s.attribute("delayedtask.uid")))
            .toList();
    assertThat(fire).hasSize(1);
    assertThat(traceparent)
        .isEqualTo("00-" + fire.get(0).traceId() + "-" + fire.get(0).spanId() + "-01");
    assertThat(fire.get(0).parentSpanId()).isEmpty();
    assertThat(fire.get(0).attributes())
        .containsEntry("delayedtask.kind", "job")
        .containsEntry("delayedtask.outcome", "running");
    assertThat(Events.count(client, ns, "bad-parent", "InvalidTraceparent")).isEqualTo(1);
    assertThat(
            client.v1().events().inNamespace(ns).list().getItems().stream()
                .filter(e -> "InvalidTraceparent".equals(e.getReason()))
                .findFirst()
                .orElseThrow())
        .satisfies(
            e -> {
              assertThat(e.getType()).isEqualTo("Warning");
              assertThat(e.getMessage())
                  .contains(TaskTrace.TRACEPARENT_ANNOTATION)
                  .contains("not-a-traceparent");
            });
  }
}
