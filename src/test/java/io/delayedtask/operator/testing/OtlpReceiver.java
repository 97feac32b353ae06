package io.delayedtask.operator.testing;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;

/**
 * An OTLP/HTTP trace endpoint on 127.0.0.1 ({@code POST /v1/traces}, protobuf), decoding what it is
 * sent with OpenTelemetry's own protocol types ({@code opentelemetry-proto}), never the exporter's
 * code. {@link #endpoint()} is what {@code OTEL_EXPORTER_OTLP_ENDPOINT} takes.
 */
public final class OtlpReceiver implements AutoCloseable {
  /** One span as received, its ids in lower-case hex, its attributes as strings. */
  public record ReceivedSpan(
      String name,
      String traceId,
      String spanId,
      String parentSpanId,
      Span.SpanKind kind,
      long startNanos,
      long endNanos,
      Map<String, String> attributes,
      String serviceName,
      int statusCode) {
    public String attribute(String key) {
      return attributes.get(key);
    }
  }

  private final HttpServer server;
  private final List<ReceivedSpan> spans = new CopyOnWriteArrayList<>();
  private final List<String> paths = new CopyOnWriteArrayList<>();

  private OtlpReceiver(HttpServer server) {
    this.server = server;
  }

  public static OtlpReceiver start() {
    try {
      HttpServer server =
          HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 16);
      OtlpReceiver receiver = new OtlpReceiver(server);
      server.createContext("/", receiver::handle);
      server.setExecutor(Executors.newFixedThreadPool(2));
      server.start();
      return receiver;
    } catch (IOException e) {
      throw new IllegalStateException("cannot start an OTLP receiver on loopback", e);
    }
  }

  public String endpoint() {
    return "http://127.0.0.1:" + server.getAddress().getPort();
  }

  public List<ReceivedSpan> spans() {
    return List.copyOf(spans);
  }

  public List<ReceivedSpan> spans(String name) {
    return spans.stream().filter(span -> span.name().equals(name)).toList();
  }

  /** The paths of every request received (all of them should be /v1/traces). */
  public List<String> paths() {
    return List.copyOf(paths);
  }

  private void handle(HttpExchange exchange) throws IOException {
    try (exchange;
        InputStream in = exchange.getRequestBody()) {
      paths.add(exchange.getRequestURI().getPath());
      ExportTraceServiceRequest request = ExportTraceServiceRequest.parseFrom(in.readAllBytes());
      for (ResourceSpans resource : request.getResourceSpansList()) {
        String service =
            resource.getResource().getAttributesList().stream()
                .filter(kv -> kv.getKey().equals("service.name"))
                .map(kv -> text(kv.getValue()))
                .findFirst()
                .orElse("");
        for (ScopeSpans scope : resource.getScopeSpansList()) {
          for (Span span : scope.getSpansList()) {
            Map<String, String> attributes = new LinkedHashMap<>();
            for (KeyValue kv : span.getAttributesList()) {
              attributes.put(kv.getKey(), text(kv.getValue()));
            }
            spans.add(
                new ReceivedSpan(
                    span.getName(),
                    hex(span.getTraceId().toByteArray()),
                    hex(span.getSpanId().toByteArray()),
                    hex(span.getParentSpanId().toByteArray()),
                    span.getKind(),
                    span.getStartTimeUnixNano(),
                    span.getEndTimeUnixNano(),
                    attributes,
                    service,
                    span.getStatus().getCodeValue()));
          }
        }
      }
      byte[] answer = ExportTraceServiceResponse.getDefaultInstance().toByteArray();
      exchange.getResponseHeaders().add("Content-Type", "application/x-protobuf");
      exchange.sendResponseHeaders(200, answer.length == 0 ? -1 : answer.length);
      if (answer.length > 0) {
        exchange.getResponseBody().write(answer);
      }
    }
  }

  private static String text(AnyValue value) {
    return switch (value.getValueCase()) {
      case STRING_VALUE -> value.getStringValue();
      case INT_VALUE -> Long.toString(value.getIntValue());
      case BOOL_VALUE -> Boolean.toString(value.getBoolValue());
      case DOUBLE_VALUE -> Double.toString(value.getDoubleValue());
      default -> value.toString();
    };
  }

  private static String hex(byte[] bytes) {
    return HexFormat.of().formatHex(bytes);
  }

  @Override
  public void close() {
    server.stop(0);
  }
}
