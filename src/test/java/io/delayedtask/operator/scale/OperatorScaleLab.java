package io.delayedtask.operator.scale;

import io.delayedtask.operator.testing.MockApiServer;
import io.delayedtask.operator.testing.OperatorProcess;
import io.delayedtask.operator.testing.RedisProcess;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** The pieces the operator scale runs share: API server, Redis, and an operator process with a real heap. */
final class OperatorScaleLab implements AutoCloseable {
  static final String NAMESPACE = "scale";
  static final List<String> JVM = List.of("-Xmx1g", "-XX:+UseG1GC");

  final MockApiServer api = MockApiServer.start();
  final RedisProcess redis = RedisProcess.start();
  private final Path kubeconfig;
  private final HttpClient http = HttpClient.newHttpClient();

  OperatorScaleLab() throws IOException {
    kubeconfig = api.writeKubeconfig(Files.createTempFile("kubeconfig-", ".yaml"), NAMESPACE);
    api.client().namespaces().resource(new io.fabric8.kubernetes.api.model.NamespaceBuilder()
        .withNewMetadata().withName(NAMESPACE).endMetadata().build()).create();
  }

  OperatorProcess startOperator(String name, int httpPort) {
    return OperatorProcess.start(name, Map.of(
        "KUBECONFIG", kubeconfig.toString(),
        "KUBERNETES_HTTP2_DISABLE", "true",
        "DELAYEDTASK_REDIS_URI", redis.uri(),
        "DELAYEDTASK_NAMESPACES", NAMESPACE,
        "DELAYEDTASK_LEASE_NAMESPACE", NAMESPACE,
        "DELAYEDTASK_HTTP_PORT", Integer.toString(httpPort)), JVM);
  }

  boolean ready(int port) {
    try {
      return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/readyz")).build(),
          HttpResponse.BodyHandlers.discarding()).statusCode() == 200;
    } catch (IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /** Heap in use, from the operator's own /metrics (sum of jvm_memory_used_bytes{area="heap"}). */
  long heapUsedBytes(int port) throws IOException, InterruptedException {
    String metrics = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics")).build(),
        HttpResponse.BodyHandlers.ofString()).body();
    Matcher m = Pattern.compile("(?m)^jvm_memory_used_bytes\\{[^}]*area=\"heap\"[^}]*} ([0-9.eE+]+)").matcher(metrics);
    double sum = 0;
    while (m.find()) {
      sum += Double.parseDouble(m.group(1));
    }
    return (long) sum;
  }

  static int freePort() {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  static long percentile(List<Long> sorted, double p) {
    return sorted.isEmpty() ? -1 : sorted.get(Math.min(sorted.size() - 1, (int) Math.ceil(p * sorted.size()) - 1));
  }

  @Override
  public void close() {
    redis.close();
    api.close();
  }
}
