package io.delayedtask.operator.trace;

import io.delayedtask.operator.config.ConfigException;
import io.delayedtask.operator.task.job.TaskTrace;
import io.delayedtask.operator.task.time.Times;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanBuilder;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.autoconfigure.AutoConfiguredOpenTelemetrySdk;
import io.opentelemetry.sdk.autoconfigure.spi.ConfigurationException;
import io.opentelemetry.sdk.trace.IdGenerator;
import io.opentelemetry.sdk.trace.samplers.Sampler;
import io.opentelemetry.sdk.trace.samplers.SamplingDecision;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalInt;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

/**
 * The operator's spans (docs/reference.md, "Trace context"): {@code delayedtask.fire} per firing
 * and {@code delayedtask.deliver} per delivery attempt, exported by the OpenTelemetry SDK, which
 * its autoconfiguration sets up from OpenTelemetry's own variables ({@code
 * OTEL_EXPORTER_OTLP_ENDPOINT}, {@code OTEL_SERVICE_NAME}, {@code OTEL_TRACES_SAMPLER}, ...). Off
 * unless {@code OTEL_EXPORTER_OTLP_ENDPOINT} (or {@code OTEL_EXPORTER_OTLP_TRACES_ENDPOINT}) is set
 * or {@code OTEL_TRACES_EXPORTER} names another exporter than {@code otlp} (such as {@code
 * logging}); {@code OTEL_SDK_DISABLED=true} or {@code OTEL_TRACES_EXPORTER=none} keep it off. Off,
 * no SDK is built: no exporter thread, and an attempt's span id is a random number.
 *
 * <p>The span ids are the ones the receivers see: an attempt's {@code traceparent} names its {@code
 * delayedtask.deliver} span, whose parent is the firing's span ({@link TaskTrace#firing()}), whose
 * id is derived from the task's uid and due time, so a span exported after a restart still has the
 * parent the first attempt named. The SDK generates ids through {@link ChosenIds}, which hands out
 * that derived id when the firing's span is started.
 */
public final class Tracing implements AutoCloseable {
  public static final String FIRE = "delayedtask.fire";
  public static final String DELIVER = "delayedtask.deliver";
  private static final String SCOPE = "io.delayedtask.operator";

  /** The OpenTelemetry variables that turn export on or keep it off (see {@link #wanted}). */
  public static final String SDK_DISABLED = "OTEL_SDK_DISABLED";

  public static final String TRACES_EXPORTER = "OTEL_TRACES_EXPORTER";
  public static final String OTLP_ENDPOINT = "OTEL_EXPORTER_OTLP_ENDPOINT";
  public static final String OTLP_TRACES_ENDPOINT = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT";

  /**
   * What {@code --help} says of OpenTelemetry's variables: the switches, the defaults this operator
   * sets.
   */
  public static final String HELP =
      """
      Traces (off by default: no SDK, no exporter thread) are configured by OpenTelemetry's own variables,
      read by its SDK's autoconfiguration:
        OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT  an OTLP/HTTP collector: turns export on
        OTEL_TRACES_EXPORTER  (default: otlp) another exporter (such as logging) turns export on; none keeps it off
        OTEL_SDK_DISABLED  true keeps export off
        OTEL_SERVICE_NAME  (default: delayed-task-operator)
        OTEL_EXPORTER_OTLP_PROTOCOL  (default: http/protobuf; no gRPC sender is shipped)
        OTEL_EXPORTER_OTLP_HEADERS, OTEL_TRACES_SAMPLER, OTEL_TRACES_SAMPLER_ARG, ...  as OpenTelemetry defines them
      A value the SDK refuses stops the start with exit status 2 and its message.
      """;

  private static final Tracing OFF = new Tracing(null, null);

  private final OpenTelemetrySdk sdk;
  private final Tracer tracer;

  private Tracing(OpenTelemetrySdk sdk, Tracer tracer) {
    this.sdk = sdk;
    this.tracer = tracer;
  }

  /** No SDK, nothing exported; trace context is still propagated. */
  public static Tracing off() {
    return OFF;
  }

  /**
   * From the process's environment ({@code OTEL_*}): off unless it asks for an exporter (see the
   * class comment). A value the SDK refuses stops the start with its message.
   */
  public static Tracing fromEnvironment(Map<String, String> env) {
    if (!wanted(env)) {
      return OFF;
    }
    Map<String, String> properties = new HashMap<>();
    env.forEach(
        (name, value) -> {
          if (name.startsWith("OTEL_")) {
            properties.put(name.toLowerCase(Locale.ROOT).replace('_', '.'), value);
          }
        });
    AtomicReference<Sampler> sampler = new AtomicReference<>();
    try {
      OpenTelemetrySdk sdk =
          AutoConfiguredOpenTelemetrySdk.builder()
              // Defaults the variables override: traces only, under the operator's name, over
              // OTLP/HTTP
              // (the specification's default; the JDK's HttpClient sends it, no gRPC sender is
              // shipped).
              .addPropertiesSupplier(
                  () ->
                      Map.of(
                          "otel.service.name", "delayed-task-operator",
                          "otel.exporter.otlp.protocol", "http/protobuf",
                          "otel.metrics.exporter", "none",
                          "otel.logs.exporter", "none"))
              .addPropertiesCustomizer(config -> properties)
              .addSamplerCustomizer(
                  (configured, config) -> {
                    sampler.set(configured);
                    return configured;
                  })
              .addTracerProviderCustomizer(
                  (builder, config) -> builder.setIdGenerator(new ChosenIds()))
              .disableShutdownHook()
              .build()
              .getOpenTelemetrySdk();
      Sampler chosen = sampler.get();
      if (chosen != null) {
        // A new trace's sampled flag (the Job's TRACEPARENT, the firing's span) is the sampler's
        // root decision.
        TaskTrace.sampleNewTraces(
            traceId ->
                chosen
                        .shouldSample(
                            Context.root(),
                            traceId,
                            FIRE,
                            SpanKind.INTERNAL,
                            Attributes.empty(),
                            List.of())
                        .getDecision()
                    != SamplingDecision.DROP);
      }
      return new Tracing(sdk, sdk.getTracer(SCOPE));
    } catch (ConfigurationException e) {
      throw new ConfigException(
          "OpenTelemetry's configuration (the OTEL_* variables) was refused: "
              + e.getMessage()
              + (e.getCause() == null ? "" : " (" + e.getCause() + ")")
              + "; fix or remove that variable",
          e);
    }
  }

  /** Whether the environment asks for spans to be exported. */
  static boolean wanted(Map<String, String> env) {
    if ("true".equalsIgnoreCase(env.getOrDefault(SDK_DISABLED, "").trim())) {
      return false;
    }
    String exporters = env.getOrDefault(TRACES_EXPORTER, "").trim().toLowerCase(Locale.ROOT);
    if (exporters.equals("none")) {
      return false;
    }
    boolean endpoint =
        !env.getOrDefault(OTLP_ENDPOINT, "").isBlank()
            || !env.getOrDefault(OTLP_TRACES_ENDPOINT, "").isBlank();
    boolean otherExporter =
        !exporters.isEmpty()
            && List.of(exporters.split(",")).stream()
                .map(String::trim)
                .anyMatch(name -> !name.isEmpty() && !name.equals("otlp") && !name.equals("none"));
    return endpoint || otherExporter;
  }

  /** True when spans are exported. */
  public boolean exporting() {
    return sdk != null;
  }

  /**
   * Starts an attempt's span ({@code delayedtask.deliver}, an HTTP client span): its context is the
   * one the request's {@code traceparent} carries; end it with the answer. {@code namespace},
   * {@code name} and {@code uid} are the task's coordinates.
   */
  public Delivery deliver(
      TaskTrace trace,
      String namespace,
      String name,
      String uid,
      int attempt,
      boolean deadLetter,
      URI url) {
    if (sdk == null) {
      return new Delivery(null, trace.attempt());
    }
    SpanBuilder builder =
        tracer
            .spanBuilder(DELIVER)
            .setSpanKind(SpanKind.CLIENT)
            .setParent(Context.root().with(Span.wrap(trace.firing())))
            .setAttribute("http.request.method", "POST")
            .setAttribute("url.full", url.toString())
            .setAttribute("server.address", url.getHost())
            .setAttribute("server.port", (long) port(url))
            .setAttribute("delayedtask.namespace", namespace)
            .setAttribute("delayedtask.name", name)
            .setAttribute("delayedtask.uid", uid)
            .setAttribute("delayedtask.attempt", (long) attempt)
            .setAttribute("delayedtask.target", deadLetter ? "dead_letter_sink" : "sink");
    if (attempt > 1) {
      builder.setAttribute("http.request.resend_count", (long) attempt - 1);
    }
    Span span = builder.startSpan();
    return new Delivery(span, span.getSpanContext());
  }

  /**
   * Records a firing's span ({@code delayedtask.fire}), from its due time to now (its status
   * write).
   *
   * @param kind {@code job}, {@code sink} or {@code status}
   * @param outcome the phase the firing wrote, in lower case
   */
  public void fired(
      TaskTrace trace,
      String namespace,
      String name,
      String uid,
      Instant due,
      Duration lag,
      String kind,
      String outcome,
      Instant now) {
    if (sdk == null) {
      return;
    }
    SpanContext firing = trace.firing();
    SpanBuilder builder =
        tracer
            .spanBuilder(FIRE)
            .setSpanKind(SpanKind.INTERNAL)
            .setStartTimestamp(due.toEpochMilli(), TimeUnit.MILLISECONDS)
            .setAttribute("delayedtask.namespace", namespace)
            .setAttribute("delayedtask.name", name)
            .setAttribute("delayedtask.uid", uid)
            .setAttribute("delayedtask.due_time", Times.format(due))
            .setAttribute("delayedtask.lag_ms", lag.toMillis())
            .setAttribute("delayedtask.kind", kind)
            .setAttribute("delayedtask.outcome", outcome);
    if (trace.parent().isPresent()) {
      builder.setParent(Context.root().with(Span.wrap(trace.parent().get())));
    } else {
      builder.setNoParent();
    }
    Span span = ChosenIds.with(firing.getTraceId(), firing.getSpanId(), builder::startSpan);
    if (outcome.equals("failed") || outcome.equals("missed")) {
      span.setStatus(StatusCode.ERROR, outcome);
    }
    span.end(now.isBefore(due) ? due : now);
  }

  private static int port(URI url) {
    return url.getPort() != -1
        ? url.getPort()
        : "https".equalsIgnoreCase(url.getScheme()) ? 443 : 80;
  }

  /** Flushes and stops the SDK (at most 10 s); nothing when off. */
  @Override
  public void close() {
    if (sdk != null) {
      TaskTrace.sampleNewTraces(null);
      sdk.shutdown().join(10, TimeUnit.SECONDS);
    }
  }

  /** An attempt's span: its context for the headers, ended once with the answer. */
  public static final class Delivery {
    private final Span span;
    private final SpanContext context;

    Delivery(Span span, SpanContext context) {
      this.span = span;
      this.context = context;
    }

    /** The attempt's span context, for {@code traceparent}. */
    public SpanContext context() {
      return context;
    }

    /** The {@code traceparent} (and {@code tracestate}) headers naming this attempt's span. */
    public Map<String, String> headers() {
      return TaskTrace.headers(context);
    }

    /**
     * The attempt ended: with an answer ({@code status}), or without one ({@code errorType}, a
     * short low-cardinality phrase). 4xx and 5xx are errors, as the HTTP semantic conventions say
     * of a client span.
     */
    public void end(OptionalInt status, String errorType) {
      if (span == null) {
        return;
      }
      if (status.isPresent()) {
        span.setAttribute("http.response.status_code", (long) status.getAsInt());
        if (status.getAsInt() >= 400) {
          span.setAttribute("error.type", Integer.toString(status.getAsInt()));
          span.setStatus(StatusCode.ERROR);
        }
      } else {
        span.setAttribute("error.type", errorType);
        span.setStatus(StatusCode.ERROR, errorType);
      }
      span.end();
    }
  }

  /**
   * The SDK's ids: random, except the ids a firing's span must have (its trace's and its own, both
   * derived from the task's uid and due time), handed out on the thread that starts that span.
   */
  static final class ChosenIds implements IdGenerator {
    private static final ThreadLocal<String[]> CHOSEN = new ThreadLocal<>();

    static <T> T with(String traceId, String spanId, Supplier<T> start) {
      CHOSEN.set(new String[] {traceId, spanId});
      try {
        return start.get();
      } finally {
        CHOSEN.remove();
      }
    }

    @Override
    public String generateSpanId() {
      String[] chosen = CHOSEN.get();
      return chosen != null ? chosen[1] : IdGenerator.random().generateSpanId();
    }

    @Override
    public String generateTraceId() {
      String[] chosen = CHOSEN.get();
      return chosen != null ? chosen[0] : IdGenerator.random().generateTraceId();
    }
  }
}
