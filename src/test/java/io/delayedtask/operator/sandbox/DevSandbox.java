package io.delayedtask.operator.sandbox;

import io.delayedtask.operator.DelayedTaskOperator;
import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.config.OperatorConfig;
import io.delayedtask.operator.testing.Kubeconfig;
import io.delayedtask.operator.testing.RedisProcess;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.stream.Stream;

/**
 * The dev sandbox: the real operator, unchanged, against an embedded Kubernetes API (the fabric8
 * mock server in CRUD mode) and an embedded Redis, on a laptop with nothing but JDK 17 and Maven.
 *
 * <p>Run with {@code mvn -B -q -Psandbox} (see the README). It writes a kubeconfig, applies the
 * examples of {@code k8s/examples/}, prints every task's phase changes with the fire lag, and stops
 * everything cleanly on Ctrl-C.
 */
public final class DevSandbox {
  private static final PrintStream OUT = System.out;

  private final Deque<AutoCloseable> running = new ArrayDeque<>();
  private KubernetesClient client;
  private Path kubeconfig;

  public static void main(String[] args) throws Exception {
    // The mock API server logs every request through java.util.logging; the sandbox has its own output.
    java.util.logging.LogManager.getLogManager().reset();
    DevSandbox sandbox = new DevSandbox();
    Runtime.getRuntime().addShutdownHook(new Thread(sandbox::stop, "sandbox-stop"));
    sandbox.start(Path.of("").toAbsolutePath());
    new CountDownLatch(1).await();
  }

  void start(Path project) throws IOException {
    Path work = Files.createDirectories(project.resolve("target/sandbox"));

    // 1. An embedded Redis: the binary embedded-redis ships, on a free port, no persistence.
    RedisProcess redis = RedisProcess.start();
    running.push(redis);

    // 2. An embedded Kubernetes API with the CRD and discovery, and a kubeconfig for kubectl.
    SandboxApiServer api = new SandboxApiServer(project.resolve("crds/delayedtasks.delayedtask.io-v1.yml"), 0);
    running.push(api);
    kubeconfig = Kubeconfig.write(work.resolve("kubeconfig"), api.url(), "default");
    client = api.client();

    // 3. The mock has no kubelet: something has to finish the Jobs the operator creates.
    running.push(new JobCompleter(client, Duration.ofSeconds(3)));

    // 4. The operator, configured the way the process reads its environment.
    int httpPort = freePortPreferring(Integer.getInteger("sandbox.httpPort", 8080));
    OperatorConfig config = OperatorConfig.fromEnv(Map.of(
        OperatorConfig.REDIS_URI, redis.uri(),
        OperatorConfig.HTTP_PORT, Integer.toString(httpPort),
        OperatorConfig.LEASE_NAMESPACE, "default",
        OperatorConfig.IDENTITY, "sandbox",
        OperatorConfig.RESYNC_SECONDS, "60"));
    running.push(DelayedTaskOperator.start(config, client));

    // 5. Watch every task and say what happens to it.
    SharedIndexInformer<DelayedTask> informer =
        client.resources(DelayedTask.class).inAnyNamespace().inform(new PhaseReporter(OUT));
    running.push(informer::close);

    printUsage(project, kubeconfig, api.url(), redis, httpPort);
    applyExamples(client, project.resolve("k8s/examples"));
  }

  private void printUsage(Path project, Path kubeconfig, String apiUrl, RedisProcess redis, int httpPort) {
    String k = "kubectl --kubeconfig " + project.relativize(kubeconfig);
    OUT.println("""

        delayed-task-operator sandbox is running
          Kubernetes API (mock, CRUD) : %s
          Redis                       : %s
          metrics / health            : http://localhost:%d/metrics  /healthz  /readyz

        Try, in another terminal:
          %s apply --validate=false -f k8s/examples/
          %s get dt -o custom-columns=NAME:.metadata.name,DUE:.status.dueTime,PHASE:.status.phase,JOB:.status.jobName
          %s get jobs
          %s delete dt <name>
        (the mock API server does not do watch (-w), wait, or server-side apply)

        Phase changes are printed below as they happen. Ctrl-C stops everything.
        """.formatted(apiUrl, redis.uri(), httpPort, k, k, k, k));
  }

  private static void applyExamples(KubernetesClient client, Path examples) throws IOException {
    if (!Files.isDirectory(examples)) {
      OUT.println("(no " + examples + " to apply)");
      return;
    }
    List<Path> files;
    try (Stream<Path> listing = Files.list(examples)) {
      files = listing.filter(p -> p.toString().endsWith(".yaml") || p.toString().endsWith(".yml")).sorted().toList();
    }
    for (Path file : files) {
      try (InputStream in = Files.newInputStream(file)) {
        for (HasMetadata item : client.load(in).items()) {
          client.resource(item).inNamespace("default").createOr(existing -> existing.update());
          OUT.println("applied " + examples.getParent().getParent().relativize(file));
        }
      } catch (RuntimeException e) {
        OUT.println("could not apply " + file.getFileName() + ": " + e.getMessage());
      }
    }
  }

  /** A client of the sandbox's API server. */
  KubernetesClient client() {
    return client;
  }

  /** The kubeconfig the sandbox wrote for kubectl. */
  Path kubeconfig() {
    return kubeconfig;
  }

  /** Stops everything in the reverse order of starting. */
  void stop() {
    while (!running.isEmpty()) {
      try {
        running.pop().close();
      } catch (Exception e) {
        OUT.println("while stopping: " + e);
      }
    }
    OUT.println("sandbox stopped");
  }

  private static int freePortPreferring(int preferred) throws IOException {
    try (ServerSocket socket = new ServerSocket(preferred)) {
      return socket.getLocalPort();
    } catch (IOException busy) {
      try (ServerSocket socket = new ServerSocket(0)) {
        return socket.getLocalPort();
      }
    }
  }
}
