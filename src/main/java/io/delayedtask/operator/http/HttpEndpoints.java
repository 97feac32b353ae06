package io.delayedtask.operator.http;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Supplier;

/** /metrics (Prometheus text), /healthz (the process runs) and /readyz (it can do its work). */
public final class HttpEndpoints implements AutoCloseable {
  private final HttpServer server;
  private final ExecutorService executor;

  /** Why the operator is not ready, or null when it is. */
  @FunctionalInterface
  public interface Readiness {
    String notReadyReason();
  }

  private HttpEndpoints(HttpServer server, ExecutorService executor) {
    this.server = server;
    this.executor = executor;
  }

  public static HttpEndpoints start(int port, PrometheusMeterRegistry registry, Readiness readiness) {
    HttpServer server;
    try {
      server = HttpServer.create(new InetSocketAddress(port), 0);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot listen on port " + port + " (DELAYEDTASK_HTTP_PORT)", e);
    }
    server.createContext("/metrics", exchange -> respond(exchange, 200,
        "text/plain; version=0.0.4; charset=utf-8", registry::scrape));
    server.createContext("/healthz", exchange -> respond(exchange, 200, "text/plain", () -> "ok\n"));
    server.createContext("/readyz", exchange -> {
      String reason = readiness.notReadyReason();
      respond(exchange, reason == null ? 200 : 503, "text/plain", () -> reason == null ? "ready\n" : reason + "\n");
    });
    ExecutorService executor = Executors.newFixedThreadPool(2, r -> {
      Thread thread = new Thread(r, "http");
      thread.setDaemon(true);
      return thread;
    });
    server.setExecutor(executor);
    server.start();
    return new HttpEndpoints(server, executor);
  }

  public int port() {
    return server.getAddress().getPort();
  }

  private static void respond(HttpExchange exchange, int status, String contentType, Supplier<String> body)
      throws IOException {
    try (exchange) {
      if (!"GET".equals(exchange.getRequestMethod()) && !"HEAD".equals(exchange.getRequestMethod())) {
        exchange.sendResponseHeaders(405, -1);
        return;
      }
      String path = exchange.getRequestURI().getPath();
      if (!path.equals(exchange.getHttpContext().getPath())) {
        exchange.sendResponseHeaders(404, -1);
        return;
      }
      byte[] bytes = body.get().getBytes(StandardCharsets.UTF_8);
      exchange.getResponseHeaders().set("Content-Type", contentType);
      exchange.sendResponseHeaders(status, bytes.length);
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(bytes);
      }
    }
  }

  @Override
  public void close() {
    server.stop(0);
    executor.shutdownNow();
  }
}
