package io.delayedtask.operator.testing;

import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * A real Prometheus server (Debian's {@code prometheus} package, or the binary named by {@code
 * DELAYEDTASK_TEST_PROMETHEUS}) on a free loopback port, scraping one target every second, with its
 * TSDB and log in a temporary directory, and optionally a rules file to evaluate.
 */
public final class PrometheusServer implements AutoCloseable {
  private static final ObjectMapper JSON = new ObjectMapper();

  private final Process process;
  private final Path dir;
  private final URI base;
  private final HttpClient http = HttpClient.newHttpClient();

  private PrometheusServer(Process process, Path dir, URI base) {
    this.process = process;
    this.dir = dir;
    this.base = base;
  }

  /**
   * Starts Prometheus scraping {@code target} (host:port, path /metrics) as job {@code job}, with
   * {@code targetLabels} (YAML flow map, e.g. {@code {namespace: ops}}) and {@code rules} (may be
   * null).
   */
  public static PrometheusServer start(
      String job, String target, String targetLabels, String rules) {
    Path binary =
        RequiredTool.find(
            "prometheus", "DELAYEDTASK_TEST_PROMETHEUS", "apt-get install -y prometheus");
    try {
      Path dir = Files.createTempDirectory("prometheus-");
      String ruleFiles = "";
      if (rules != null) {
        Files.writeString(dir.resolve("rules.yaml"), rules);
        ruleFiles = "rule_files: [" + dir.resolve("rules.yaml") + "]\n";
      }
      Files.writeString(
          dir.resolve("prometheus.yml"),
          """
          global: {scrape_interval: 1s, scrape_timeout: 900ms, evaluation_interval: 1s}
          %sscrape_configs:
          - job_name: %s
            static_configs:
            - targets: ['%s']
              labels: %s
          """
              .formatted(ruleFiles, job, target, targetLabels));
      int port = Ports.freePort();
      Process process =
          new ProcessBuilder(
                  binary.toString(),
                  "--config.file=" + dir.resolve("prometheus.yml"),
                  "--storage.tsdb.path=" + dir.resolve("data"),
                  "--web.listen-address=127.0.0.1:" + port,
                  "--log.level=warn")
              .redirectErrorStream(true)
              .redirectOutput(dir.resolve("prometheus.log").toFile())
              .start();
      PrometheusServer server =
          new PrometheusServer(process, dir, URI.create("http://127.0.0.1:" + port));
      try {
        await()
            .atMost(Duration.ofSeconds(30))
            .pollInterval(Duration.ofMillis(200))
            .until(() -> server.ready() || !process.isAlive());
        if (!process.isAlive()) {
          throw new IllegalStateException("prometheus exited: " + server.log());
        }
      } catch (RuntimeException e) {
        server.close();
        throw e;
      }
      return server;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * GET /api/v1/query: the whole response ({@code status}, {@code data.result}, or {@code error}).
   */
  public JsonNode query(String promql) {
    return get("/api/v1/query?query=" + URLEncoder.encode(promql, StandardCharsets.UTF_8));
  }

  /** GET /api/v1/rules: the loaded rule groups with each rule's health and last error. */
  public JsonNode rules() {
    return get("/api/v1/rules");
  }

  public JsonNode get(String pathAndQuery) {
    try {
      HttpResponse<String> response =
          http.send(
              HttpRequest.newBuilder(base.resolve(pathAndQuery)).build(),
              HttpResponse.BodyHandlers.ofString());
      return JSON.readTree(response.body());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  public String log() {
    try {
      return Files.readString(dir.resolve("prometheus.log"));
    } catch (IOException e) {
      return "(no log: " + e + ")";
    }
  }

  private boolean ready() {
    try {
      return http.send(
                  HttpRequest.newBuilder(base.resolve("/-/ready")).build(),
                  HttpResponse.BodyHandlers.discarding())
              .statusCode()
          == 200;
    } catch (IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  @Override
  public void close() {
    process.destroy();
    try {
      if (!process.waitFor(10, java.util.concurrent.TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    try (Stream<Path> files = Files.walk(dir)) {
      files.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
    } catch (IOException e) {
      // a leftover temp dir is harmless
    }
  }
}
