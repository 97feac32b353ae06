package io.delayedtask.operator.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The probe and metrics server on loopback: idle and stalled connections never starve /healthz, and
 * a connection that sends nothing is closed after the read timeout.
 */
class HttpEndpointsTest {
  private final PrometheusMeterRegistry registry =
      new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private final AtomicReference<String> notReady = new AtomicReference<>();
  private final List<Socket> sockets = new ArrayList<>();
  private HttpEndpoints http;

  @AfterEach
  void close() throws IOException {
    for (Socket socket : sockets) {
      socket.close();
    }
    if (http != null) {
      http.close();
    }
  }

  @Test
  void twentyIdleOrStalledConnectionsDoNotStarveHealthz() throws Exception {
    http = HttpEndpoints.start(0, registry, notReady::get);
    for (int i = 0; i < 10; i++) {
      open(); // connected, nothing sent
      // A request begun and never finished: the JDK HttpServer gave each such connection a thread.
      open()
          .getOutputStream()
          .write(
              "GET /healthz HTTP/1.1\r\nHost: localhost\r\n".getBytes(StandardCharsets.US_ASCII));
    }
    HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    for (int i = 0; i < 3; i++) {
      long start = System.nanoTime();
      HttpResponse<String> healthz =
          client.send(
              HttpRequest.newBuilder(uri("/healthz")).timeout(Duration.ofSeconds(2)).build(),
              HttpResponse.BodyHandlers.ofString());
      assertThat(healthz.statusCode()).isEqualTo(200);
      assertThat(healthz.body()).isEqualTo("ok\n");
      assertThat(Duration.ofNanos(System.nanoTime() - start))
          .as("promptly")
          .isLessThan(Duration.ofSeconds(2));
    }
  }

  @Test
  void aConnectionThatSendsNothingIsClosedAfterTheReadTimeout() throws Exception {
    http = HttpEndpoints.start(0, registry, notReady::get, Duration.ofMillis(500));
    Socket silent = open();
    Socket stalled = open();
    stalled.getOutputStream().write("GET /metr".getBytes(StandardCharsets.US_ASCII));
    for (Socket socket : List.of(silent, stalled)) {
      socket.setSoTimeout(10_000);
      InputStream in = socket.getInputStream();
      await().atMost(Duration.ofSeconds(10)).until(() -> in.read() == -1);
    }
  }

  @Test
  void probesAndMetricsAnswerAsBefore() throws Exception {
    http = HttpEndpoints.start(0, registry, notReady::get);
    registry.counter("delayedtask.test").increment();
    HttpClient client = HttpClient.newHttpClient();
    HttpResponse<String> metrics = get(client, "/metrics", "GET");
    assertThat(metrics.statusCode()).isEqualTo(200);
    assertThat(metrics.headers().firstValue("content-type"))
        .contains("text/plain; version=0.0.4; charset=utf-8");
    assertThat(metrics.body()).contains("delayedtask_test_total 1.0");
    assertThat(get(client, "/readyz", "GET").body()).isEqualTo("ready\n");
    notReady.set("not ready: Redis is unreachable");
    HttpResponse<String> readyz = get(client, "/readyz", "GET");
    assertThat(readyz.statusCode()).isEqualTo(503);
    assertThat(readyz.body()).isEqualTo("not ready: Redis is unreachable\n");
    assertThat(get(client, "/healthz", "HEAD").statusCode()).isEqualTo(200);
    assertThat(get(client, "/healthz", "POST").statusCode()).isEqualTo(405);
    assertThat(get(client, "/healthzz", "GET").statusCode()).isEqualTo(404);
    assertThat(get(client, "/", "GET").statusCode()).isEqualTo(404);
  }

  private HttpResponse<String> get(HttpClient client, String path, String method) throws Exception {
    return client.send(
        HttpRequest.newBuilder(uri(path))
            .timeout(Duration.ofSeconds(5))
            .method(method, HttpRequest.BodyPublishers.noBody())
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private URI uri(String path) {
    return URI.create("http://127.0.0.1:" + http.port() + path);
  }

  private Socket open() throws IOException {
    Socket socket = new Socket();
    socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), http.port()), 2000);
    sockets.add(socket);
    OutputStream ignored = socket.getOutputStream();
    return socket;
  }
}
