package io.delayedtask.operator.trace;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.config.ConfigException;
import io.delayedtask.operator.task.job.TaskTrace;
import io.delayedtask.operator.testing.OtlpReceiver;
import io.delayedtask.operator.testing.Tasks;
import io.opentelemetry.proto.trace.v1.Span.SpanKind;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.OptionalInt;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The SDK only when OpenTelemetry's variables ask for an exporter; the spans' ids are the ones
 * propagated.
 */
class TracingTest {
  private static final Instant DUE = Instant.parse("2026-12-05T18:00:00Z");
  private static final String GIVEN = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
  private static final URI URL = URI.create("http://receiver.test:8080/hook");

  @AfterEach
  void defaultSampling() {
    TaskTrace.sampleNewTraces(null);
  }

  private static DelayedTask task(Map<String, String> annotations) {
    DelayedTask task = Tasks.statusOnly("ns", "t", DUE);
    task.getMetadata().setUid("uid-1");
    task.getMetadata().setAnnotations(annotations);
    return task;
  }

  private static boolean exporterThreadRuns() {
    return Thread.getAllStackTraces().keySet().stream()
        .anyMatch(thread -> thread.isAlive() && thread.getName().startsWith("BatchSpanProcessor"));
  }

  @Test
  void offWithoutAnExporterAsked() {
    assertThat(Tracing.wanted(Map.of())).isFalse();
    assertThat(Tracing.wanted(Map.of("OTEL_SERVICE_NAME", "x", "OTEL_TRACES_EXPORTER", "otlp")))
        .isFalse();
    assertThat(Tracing.wanted(Map.of("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")))
        .isTrue();
    assertThat(
            Tracing.wanted(
                Map.of("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://127.0.0.1:4318/v1/traces")))
        .isTrue();
    assertThat(Tracing.wanted(Map.of("OTEL_TRACES_EXPORTER", "logging"))).isTrue();
    assertThat(
            Tracing.wanted(
                Map.of(
                    "OTEL_EXPORTER_OTLP_ENDPOINT",
                    "http://127.0.0.1:4318",
                    "OTEL_SDK_DISABLED",
                    "true")))
        .isFalse();
    assertThat(
            Tracing.wanted(
                Map.of(
                    "OTEL_EXPORTER_OTLP_ENDPOINT",
                    "http://127.0.0.1:4318",
                    "OTEL_TRACES_EXPORTER",
                    "none")))
        .isFalse();
  }

  @Test
  void offNothingIsExportedAndNoExporterThreadRunsYetAttemptsGetSpanIds() {
    try (OtlpReceiver otlp = OtlpReceiver.start()) {
      // Everything but the endpoint: still off.
      Tracing tracing =
          Tracing.fromEnvironment(
              Map.of("OTEL_BSP_SCHEDULE_DELAY", "10", "OTEL_SERVICE_NAME", "x"));
      TaskTrace trace = TaskTrace.of(task(null), DUE);

      Tracing.Delivery first = tracing.deliver(trace, "ns", "t", "uid-1", 1, false, URL);
      Tracing.Delivery second = tracing.deliver(trace, "ns", "t", "uid-1", 2, false, URL);
      first.end(OptionalInt.of(200), null);
      tracing.fired(
          trace, "ns", "t", "uid-1", DUE, Duration.ZERO, "sink", "succeeded", DUE.plusSeconds(1));
      tracing.close();

      assertThat(tracing.exporting()).isFalse();
      assertThat(exporterThreadRuns()).isFalse();
      assertThat(first.context().getTraceId()).isEqualTo(trace.firing().getTraceId());
      assertThat(first.context().getSpanId())
          .isNotEqualTo(second.context().getSpanId())
          .isNotEqualTo(trace.firing().getSpanId());
      assertThat(first.headers().get("traceparent"))
          .isEqualTo(
              "00-" + trace.firing().getTraceId() + "-" + first.context().getSpanId() + "-01");
      assertThat(otlp.paths()).isEmpty();
    }
  }

  @Test
  void exportsTheFiringAndEachAttemptWithTheIdsPropagated() {
    try (OtlpReceiver otlp = OtlpReceiver.start()) {
      Map<String, String> env = new HashMap<>();
      env.put("OTEL_EXPORTER_OTLP_ENDPOINT", otlp.endpoint());
      env.put("OTEL_SERVICE_NAME", "operator-under-test");
      Tracing tracing = Tracing.fromEnvironment(env);
      assertThat(exporterThreadRuns()).isTrue();
      TaskTrace trace = TaskTrace.of(task(Map.of(TaskTrace.TRACEPARENT_ANNOTATION, GIVEN)), DUE);

      Tracing.Delivery first = tracing.deliver(trace, "ns", "t", "uid-1", 1, false, URL);
      first.end(OptionalInt.of(503), null);
      Tracing.Delivery second = tracing.deliver(trace, "ns", "t", "uid-1", 2, false, URL);
      second.end(OptionalInt.empty(), "connection refused");
      tracing.fired(
          trace,
          "ns",
          "t",
          "uid-1",
          DUE,
          Duration.ofMillis(7),
          "sink",
          "failed",
          DUE.plusSeconds(2));
      tracing.close(); // flushes

      assertThat(otlp.paths()).isNotEmpty().allMatch("/v1/traces"::equals);
      var delivered = otlp.spans(Tracing.DELIVER);
      assertThat(delivered).hasSize(2);
      var one =
          delivered.stream()
              .filter(s -> "1".equals(s.attribute("delayedtask.attempt")))
              .findFirst()
              .orElseThrow();
      assertThat(one.traceId()).isEqualTo("4bf92f3577b34da6a3ce929d0e0e4736");
      assertThat(one.spanId()).isEqualTo(first.context().getSpanId());
      assertThat(one.parentSpanId()).isEqualTo(trace.firing().getSpanId());
      assertThat(one.kind()).isEqualTo(SpanKind.SPAN_KIND_CLIENT);
      assertThat(one.serviceName()).isEqualTo("operator-under-test");
      assertThat(one.attributes())
          .containsEntry("http.request.method", "POST")
          .containsEntry("url.full", URL.toString())
          .containsEntry("server.address", "receiver.test")
          .containsEntry("server.port", "8080")
          .containsEntry("http.response.status_code", "503")
          .containsEntry("error.type", "503")
          .containsEntry("delayedtask.namespace", "ns")
          .doesNotContainKey("http.request.resend_count");
      var two =
          delivered.stream()
              .filter(s -> "2".equals(s.attribute("delayedtask.attempt")))
              .findFirst()
              .orElseThrow();
      assertThat(two.attributes())
          .containsEntry("error.type", "connection refused")
          .containsEntry("http.request.resend_count", "1")
          .doesNotContainKey("http.response.status_code");

      var fired = otlp.spans(Tracing.FIRE);
      assertThat(fired).hasSize(1);
      assertThat(fired.get(0).traceId()).isEqualTo("4bf92f3577b34da6a3ce929d0e0e4736");
      assertThat(fired.get(0).spanId()).isEqualTo(trace.firing().getSpanId());
      assertThat(fired.get(0).parentSpanId()).isEqualTo("00f067aa0ba902b7");
      assertThat(fired.get(0).startNanos()).isEqualTo(DUE.toEpochMilli() * 1_000_000L);
      assertThat(fired.get(0).endNanos()).isEqualTo(DUE.plusSeconds(2).toEpochMilli() * 1_000_000L);
      assertThat(fired.get(0).attributes())
          .containsEntry("delayedtask.uid", "uid-1")
          .containsEntry("delayedtask.due_time", "2026-12-05T18:00:00.000Z")
          .containsEntry("delayedtask.lag_ms", "7")
          .containsEntry("delayedtask.kind", "sink")
          .containsEntry("delayedtask.outcome", "failed")
          .containsEntry("delayedtask.name", "t")
          .containsEntry("delayedtask.namespace", "ns");
    }
  }

  @Test
  void aNewTraceIsTheFiringsRootAndTheSamplerDecidesForAllOfIt() {
    try (OtlpReceiver otlp = OtlpReceiver.start()) {
      Tracing tracing =
          Tracing.fromEnvironment(Map.of("OTEL_EXPORTER_OTLP_ENDPOINT", otlp.endpoint()));
      TaskTrace trace = TaskTrace.of(task(null), DUE);
      tracing.deliver(trace, "ns", "t", "uid-1", 1, false, URL).end(OptionalInt.of(200), null);
      tracing.fired(
          trace, "ns", "t", "uid-1", DUE, Duration.ZERO, "sink", "succeeded", DUE.plusSeconds(1));
      tracing.close();

      var fired = otlp.spans(Tracing.FIRE);
      assertThat(fired)
          .singleElement()
          .satisfies(
              span -> {
                assertThat(span.traceId()).isEqualTo(trace.firing().getTraceId());
                assertThat(span.spanId()).isEqualTo(trace.firing().getSpanId());
                assertThat(span.parentSpanId()).isEmpty();
              });
      assertThat(otlp.spans(Tracing.DELIVER))
          .singleElement()
          .satisfies(span -> assertThat(span.parentSpanId()).isEqualTo(trace.firing().getSpanId()));
    }
    try (OtlpReceiver otlp = OtlpReceiver.start()) {
      Tracing tracing =
          Tracing.fromEnvironment(
              Map.of(
                  "OTEL_EXPORTER_OTLP_ENDPOINT",
                  otlp.endpoint(),
                  "OTEL_TRACES_SAMPLER",
                  "parentbased_traceidratio",
                  "OTEL_TRACES_SAMPLER_ARG",
                  "0"));
      TaskTrace trace = TaskTrace.of(task(null), DUE);
      Tracing.Delivery attempt = tracing.deliver(trace, "ns", "t", "uid-1", 1, false, URL);
      attempt.end(OptionalInt.of(200), null);
      tracing.fired(
          trace, "ns", "t", "uid-1", DUE, Duration.ZERO, "sink", "succeeded", DUE.plusSeconds(1));
      tracing.close();

      assertThat(attempt.headers().get("traceparent")).endsWith("-00");
      assertThat(otlp.spans()).isEmpty();
    }
  }

  @Test
  void theLoggingExporterNeedsNoEndpoint() {
    Tracing tracing = Tracing.fromEnvironment(Map.of("OTEL_TRACES_EXPORTER", "logging"));
    try {
      assertThat(tracing.exporting()).isTrue();
    } finally {
      tracing.close();
    }
  }

  @Test
  void aValueTheSdkRefusesStopsTheStartNamingIt() {
    assertThatThrownBy(
            () ->
                Tracing.fromEnvironment(
                    Map.of(
                        "OTEL_EXPORTER_OTLP_ENDPOINT",
                        "http://127.0.0.1:1",
                        "OTEL_TRACES_SAMPLER",
                        "sometimes")))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("sometimes")
        .hasMessageContaining("OTEL_");
  }
}
