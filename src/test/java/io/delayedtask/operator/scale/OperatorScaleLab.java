package io.delayedtask.operator.scale;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.testing.BuildIdentity;
import io.delayedtask.operator.testing.OperatorProcess;
import io.delayedtask.operator.testing.RedisProcess;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.IntFunction;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The pieces the operator scale runs share: an API server ({@link ScaleTarget}), Redis, and an
 * operator process with a real heap, watching the namespace {@value #NAMESPACE} (and the runs'
 * extra namespaces, if any) only.
 */
final class OperatorScaleLab implements AutoCloseable {
  static final String NAMESPACE = "scale";
  static final List<String> JVM = List.of("-Xmx1g", "-XX:+UseG1GC");

  final ScaleTarget target;
  final RedisProcess redis = RedisProcess.start();
  private final Path kubeconfig;
  private final List<String> namespaces;
  private final HttpClient http = HttpClient.newHttpClient();

  OperatorScaleLab(ScaleTarget target) {
    this(target, List.of());
  }

  /**
   * The same with {@code more} namespaces, created and watched by the operator beside {@value
   * #NAMESPACE}.
   */
  OperatorScaleLab(ScaleTarget target, List<String> more) {
    this.target = target;
    namespaces = new java.util.ArrayList<>(List.of(NAMESPACE));
    namespaces.addAll(more);
    namespaces.forEach(target::createNamespace);
    kubeconfig = target.operatorKubeconfig(NAMESPACE);
  }

  KubernetesClient client() {
    return target.client();
  }

  OperatorProcess startOperator(String name, int httpPort) {
    return startOperator(name, httpPort, OperatorProcess.jar());
  }

  /**
   * An operator process from {@code jar} (the build under test, or a baseline to compare it with).
   */
  OperatorProcess startOperator(String name, int httpPort, Path jar) {
    return startOperator(name, httpPort, jar, Map.of());
  }

  /** The same with more environment variables (the sink settings, for one). */
  OperatorProcess startOperator(String name, int httpPort, Path jar, Map<String, String> extraEnv) {
    List<String> jvm = new java.util.ArrayList<>(JVM);
    // -Doperator.jvmOptions="-XX:StartFlightRecording=..." to profile the operator during a run.
    String extra = System.getProperty("operator.jvmOptions", "").trim();
    if (!extra.isEmpty()) {
      jvm.addAll(List.of(extra.split("\\s+")));
    }
    return startOperator(name, httpPort, jar, extraEnv, jvm);
  }

  /** The same with the JVM's options given whole (a memory limit of its own, for one). */
  OperatorProcess startOperator(
      String name, int httpPort, Path jar, Map<String, String> extraEnv, List<String> jvm) {
    Map<String, String> env = new HashMap<>(target.operatorEnvironment());
    env.putAll(extraEnv);
    env.putAll(
        Map.of(
            "KUBECONFIG", kubeconfig.toString(),
            "DELAYEDTASK_REDIS_URI", redis.uri(),
            "DELAYEDTASK_NAMESPACES", String.join(",", namespaces),
            "DELAYEDTASK_LEASE_NAMESPACE", NAMESPACE,
            "DELAYEDTASK_HTTP_PORT", Integer.toString(httpPort)));
    return OperatorProcess.start(name, env, jvm, jar);
  }

  /**
   * Creates tasks 0..count-1 with {@code threads} concurrent clients' worth of requests; returns ms
   * taken.
   */
  long createAll(int count, int threads, IntFunction<DelayedTask> task) throws Exception {
    long start = System.nanoTime();
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<?>> parts = new java.util.ArrayList<>();
      for (int t = 0; t < threads; t++) {
        int first = t;
        parts.add(
            pool.submit(
                () -> {
                  for (int i = first; i < count; i += threads) {
                    client().resource(task.apply(i)).create();
                  }
                }));
      }
      for (Future<?> part : parts) {
        part.get();
      }
    } finally {
      pool.shutdownNow();
    }
    return (System.nanoTime() - start) / 1_000_000;
  }

  static int createThreads() {
    return Integer.getInteger("createThreads", 4);
  }

  boolean ready(int port) {
    try {
      return http.send(
                  HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/readyz"))
                      .build(),
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

  /**
   * Waits (a measuring loop, not a test) until the operator on {@code port} is ready; returns ms.
   */
  long awaitReady(OperatorProcess operator, int port) throws InterruptedException {
    long t0 = System.nanoTime();
    while (!ready(port)) {
      if (!operator.isAlive() || System.nanoTime() - t0 > 300_000_000_000L) {
        throw new IllegalStateException("operator not ready; log:\n" + operator.log());
      }
      Thread.sleep(100);
    }
    return (System.nanoTime() - t0) / 1_000_000;
  }

  /** The operator's /metrics, Prometheus text. */
  String metrics(int port) throws IOException, InterruptedException {
    return http.send(
            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics")).build(),
            HttpResponse.BodyHandlers.ofString())
        .body();
  }

  /** Heap in use, from the operator's own /metrics (sum of jvm_memory_used_bytes{area="heap"}). */
  long heapUsedBytes(int port) throws IOException, InterruptedException {
    String metrics = metrics(port);
    Matcher m =
        Pattern.compile("(?m)^jvm_memory_used_bytes\\{[^}]*area=\"heap\"[^}]*} ([0-9.eE+]+)")
            .matcher(metrics);
    double sum = 0;
    while (m.find()) {
      sum += Double.parseDouble(m.group(1));
    }
    return (long) sum;
  }

  /** The API server's processes plus the operator's, for a {@link ProcessMeter}. */
  Map<String, ProcessHandle> processes(OperatorProcess operator) {
    Map<String, ProcessHandle> all = new java.util.LinkedHashMap<>(target.serverProcesses());
    ProcessHandle.of(operator.pid()).ifPresent(p -> all.put("operator " + operator.name(), p));
    ProcessHandle.of(redis.pid()).ifPresent(p -> all.put("redis-server", p));
    return all;
  }

  static long percentile(List<Long> sorted, double p) {
    return sorted.isEmpty()
        ? -1
        : sorted.get(Math.min(sorted.size() - 1, (int) Math.ceil(p * sorted.size()) - 1));
  }

  /**
   * The headline of one target's run: which server, which jar and commit, how busy the machine is.
   */
  static void banner(String command, ScaleTarget target) {
    banner(command, target, BuildIdentity.jarUnderTest(OperatorProcess.jar()));
  }

  /** The same for another build (a baseline): {@code measured} names its jar and its own commit. */
  static void banner(String command, ScaleTarget target, String measured) {
    System.out.printf(
        "%n===== %s on the %s API server; %s; %s =====%n",
        command, target.name(), measured, ProcessMeter.loadAverage());
  }

  @Override
  public void close() {
    redis.close();
    target.close();
  }
}
