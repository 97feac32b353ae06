package io.delayedtask.operator.it;

import static io.delayedtask.operator.testing.Tasks.create;
import static io.delayedtask.operator.testing.Tasks.phase;
import static io.delayedtask.operator.testing.Tasks.task;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.delayedtask.operator.api.v1alpha1.Phase;
import io.delayedtask.operator.testing.RealKubernetes;
import io.delayedtask.operator.testing.RedisProcess;
import io.delayedtask.operator.testing.RequiresRealKubernetes;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code java -jar target/delayed-task-operator.jar} as a process: configuration errors (no API
 * server needed), and firing and SIGTERM against a real API server found through KUBECONFIG.
 */
class OperatorJarIT {
  private static final Path JAR = Path.of(System.getProperty("operator.jar", "target/delayed-task-operator.jar"));

  @TempDir
  Path dir;

  @Test
  void aBadValueExitsWithStatusTwoAndOneLineNamingTheVariable() throws Exception {
    Process process = start(Map.of("DELAYEDTASK_RESYNC_SECONDS", "soon"), dir.resolve("bad.log"));
    assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(process.exitValue()).isEqualTo(2);
    List<String> lines = Files.readAllLines(dir.resolve("bad.log"));
    assertThat(lines).singleElement().asString().startsWith("DELAYEDTASK_RESYNC_SECONDS='soon'");
  }

  /** The jar with nothing but a kubeconfig file, against a real kube-apiserver. */
  @Nested
  @RequiresRealKubernetes
  class OnARealApiServer {
    @Test
    void firesWithAKubeconfigFileAndStopsOnSigterm() throws Exception {
      RealKubernetes kube = RealKubernetes.shared();
      String ns = kube.createNamespace("jar");
      try (RedisProcess redis = RedisProcess.start()) {
        int port = freePort();
        Path log = Path.of("target", "operator-jar-it.log"); // kept for reading after a failure
        Process process = start(Map.of(
            "KUBECONFIG", kube.kubeconfig().toString(),
            "DELAYEDTASK_REDIS_URI", redis.uri(),
            "DELAYEDTASK_NAMESPACES", ns,
            "DELAYEDTASK_LEASE_NAMESPACE", ns,
            "DELAYEDTASK_HTTP_PORT", Integer.toString(port),
            "DELAYEDTASK_IDENTITY", "jar"), log);
        try {
          await().atMost(Duration.ofSeconds(90)).until(() -> Files.readString(log).contains("Starting to fire due tasks"));
          create(kube.client(), task(ns, "from-the-jar", s -> s.setDelay("1s")));
          await().atMost(Duration.ofSeconds(30))
              .until(() -> phase(kube.client(), ns, "from-the-jar").orElse(null) == Phase.Fired);
          assertThat(kube.client().leases().inNamespace(ns).withName("delayed-task-operator").get()
              .getSpec().getHolderIdentity()).isEqualTo("jar");

          process.destroy(); // SIGTERM
          assertThat(process.waitFor(60, TimeUnit.SECONDS)).as("exits after SIGTERM").isTrue();
          assertThat(Files.readString(log)).contains("Stopped");
        } finally {
          process.destroyForcibly();
        }
      }
    }
  }

  private static Process start(Map<String, String> env, Path log) throws IOException {
    assertThat(JAR).as("packaged by mvn package before the ITs").exists();
    ProcessBuilder builder = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-jar", JAR.toString())
        .redirectErrorStream(true)
        .redirectOutput(log.toFile());
    builder.environment().keySet().removeIf(key -> key.startsWith("DELAYEDTASK_") || key.equals("KUBECONFIG"));
    builder.environment().putAll(env);
    return builder.start();
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }
}
