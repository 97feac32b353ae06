package io.delayedtask.operator.task.job;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.TraceFlags;
import io.opentelemetry.api.trace.TraceState;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapGetter;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.time.Instant;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * The W3C trace context of one firing (docs/reference.md, "Trace context"): the trace of the task's
 * {@code delayedtask.io/traceparent} annotation when it holds a valid value (with its {@code
 * delayedtask.io/tracestate}), else a new trace derived from the task's uid and due time, so every
 * attempt of one due time, before and after a restart, shares it without anything recorded.
 *
 * <p>{@link #firing()} is the context of the firing's own span ({@code delayedtask.fire}): the
 * trace id, a span id derived from uid and due time, the sampled flag. A Job gets it as {@code
 * TRACEPARENT}; each delivery attempt is a span of its own whose parent it is ({@link #attempt}).
 * Parsing and formatting are OpenTelemetry's ({@link W3CTraceContextPropagator}).
 *
 * @param firing the firing's span context
 * @param parent the annotation's context (the firing's parent), empty for a new trace
 * @param invalidAnnotation the annotation's value when it was set and is not a valid traceparent
 */
public record TaskTrace(
    SpanContext firing, Optional<SpanContext> parent, Optional<String> invalidAnnotation) {
  public static final String TRACEPARENT_ANNOTATION = "delayedtask.io/traceparent";
  public static final String TRACESTATE_ANNOTATION = "delayedtask.io/tracestate";
  public static final String TRACEPARENT = "traceparent";
  public static final String TRACESTATE = "tracestate";

  /** OpenTelemetry's environment-variable carrier. */
  public static final String TRACEPARENT_ENV = "TRACEPARENT";

  public static final String TRACESTATE_ENV = "TRACESTATE";

  private static final SecureRandom RANDOM = new SecureRandom();
  private static final HexFormat HEX = HexFormat.of();
  private static final TextMapGetter<Map<String, String>> MAP_GETTER =
      new TextMapGetter<>() {
        @Override
        public Iterable<String> keys(Map<String, String> carrier) {
          return carrier.keySet();
        }

        @Override
        public String get(Map<String, String> carrier, String key) {
          return carrier == null ? null : carrier.get(key);
        }
      };

  /**
   * Whether a new trace is sampled, asked with its trace id: the SDK's sampler when tracing is on
   * ({@code OTEL_TRACES_SAMPLER}), else always (the receiver's own sampler then decides on a
   * sampled parent as it would on a trace of its own).
   */
  private static volatile Predicate<String> newTraceSampled = traceId -> true;

  public static void sampleNewTraces(Predicate<String> sampled) {
    newTraceSampled = sampled == null ? traceId -> true : sampled;
  }

  /** The trace context of the task's firing at {@code due}. */
  public static TaskTrace of(DelayedTask task, Instant due) {
    Map<String, String> annotations = task.getMetadata().getAnnotations();
    String value = annotations == null ? null : annotations.get(TRACEPARENT_ANNOTATION);
    String key = task.getMetadata().getUid() + "/" + due.toEpochMilli();
    String fireSpanId = HEX.formatHex(digest("delayedtask.fire " + key), 0, 8);
    if (value != null) {
      Optional<SpanContext> given = parse(value, annotations.get(TRACESTATE_ANNOTATION));
      if (given.isPresent()) {
        SpanContext parent = given.get();
        return new TaskTrace(
            SpanContext.createFromRemoteParent(
                parent.getTraceId(), fireSpanId, parent.getTraceFlags(), parent.getTraceState()),
            given,
            Optional.empty());
      }
    }
    String traceId = HEX.formatHex(digest("delayedtask.trace " + key), 0, 16);
    TraceFlags flags =
        newTraceSampled.test(traceId) ? TraceFlags.getSampled() : TraceFlags.getDefault();
    return new TaskTrace(
        SpanContext.createFromRemoteParent(traceId, fireSpanId, flags, TraceState.getDefault()),
        Optional.empty(),
        Optional.ofNullable(value));
  }

  /**
   * A {@code traceparent} (and {@code tracestate}) as W3C Trace Context reads them; empty when the
   * traceparent is not valid. A tracestate that is not valid is dropped, as the specification says.
   */
  public static Optional<SpanContext> parse(String traceparent, String tracestate) {
    Map<String, String> carrier = new LinkedHashMap<>();
    carrier.put(TRACEPARENT, traceparent.trim());
    if (tracestate != null) {
      carrier.put(TRACESTATE, tracestate.trim());
    }
    Context extracted =
        W3CTraceContextPropagator.getInstance().extract(Context.root(), carrier, MAP_GETTER);
    SpanContext context = Span.fromContext(extracted).getSpanContext();
    return context.isValid() ? Optional.of(context) : Optional.empty();
  }

  /**
   * A delivery attempt's span context when no SDK chose its span id: a random one, the firing its
   * parent.
   */
  public SpanContext attempt() {
    byte[] id = new byte[8];
    do {
      RANDOM.nextBytes(id);
    } while (isZero(id));
    return SpanContext.create(
        firing.getTraceId(), HEX.formatHex(id), firing.getTraceFlags(), firing.getTraceState());
  }

  /**
   * The {@code traceparent} and, when not empty, {@code tracestate} HTTP headers for {@code span}.
   */
  public static Map<String, String> headers(SpanContext span) {
    Map<String, String> headers = new LinkedHashMap<>();
    W3CTraceContextPropagator.getInstance()
        .inject(Context.root().with(Span.wrap(span)), headers, Map::put);
    return headers;
  }

  /**
   * {@code TRACEPARENT} and, when not empty, {@code TRACESTATE}: the firing's, for a Job's
   * containers.
   */
  public Map<String, String> environment() {
    Map<String, String> env = new LinkedHashMap<>();
    headers(firing)
        .forEach((name, value) -> env.put(name.toUpperCase(java.util.Locale.ROOT), value));
    return env;
  }

  private static boolean isZero(byte[] bytes) {
    for (byte b : bytes) {
      if (b != 0) {
        return false;
      }
    }
    return true;
  }

  private static byte[] digest(String text) {
    try {
      byte[] hash =
          MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
      if (isZero(java.util.Arrays.copyOf(hash, 8))) {
        hash[7] = 1; // an all-zero id is invalid; 2^-64 away, and deterministic all the same
      }
      return hash;
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JVM has SHA-256", e);
    }
  }
}
