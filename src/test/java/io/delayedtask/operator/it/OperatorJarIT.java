package io.delayedtask.operator.it;

import static io.delayedtask.operator.testing.Tasks.create;
import static io.delayedtask.operator.testing.Tasks.phase;
import static io.delayedtask.operator.testing.Tasks.task;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.delayedtask.operator.api.v1alpha1.Phase;
import io.delayedtask.operator.testing.Kubeconfig;
import io.delayedtask.operator.testing.OperatorHttp;
import io.delayedtask.operator.testing.Ports;
import io.delayedtask.operator.testing.RealKubernetes;
import io.delayedtask.operator.testing.RedisProcess;
import io.delayedtask.operator.testing.RequiresLoopbackOnlyNetwork;
import io.delayedtask.operator.testing.RequiresRealKubernetes;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@code java -jar target/delayed-task-operator.jar} as a process: configuration errors (no API
 * server needed), and firing and SIGTERM against a real API server found through KUBECONFIG.
 */
@RequiresLoopbackOnlyNetwork
class OperatorJarIT {
  private static final Path JAR =
      Path.of(System.getProperty("operator.jar", "target/delayed-task-operator.jar"));

  @TempDir Path dir;

  @Test
  void aBadValueExitsWithStatusTwoAndOneLineNamingTheVariable() throws Exception {
    Process process = start(Map.of("DELAYEDTASK_RESYNC_SECONDS", "soon"), dir.resolve("bad.log"));
    assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(process.exitValue()).isEqualTo(2);
    List<String> lines = Files.readAllLines(dir.resolve("bad.log"));
    assertThat(lines).singleElement().asString().startsWith("DELAYEDTASK_RESYNC_SECONDS='soon'");
  }

  @ParameterizedTest
  @CsvSource({"DELAYEDTASK_LOG_FORMAT, yaml", "DELAYEDTASK_LOG_LEVEL, LOUD"})
  void aBadLogSettingExitsWithStatusTwoAndOneLineNamingTheVariable(String variable, String value)
      throws Exception {
    Path log = dir.resolve("bad-log.log");
    Process process = start(Map.of(variable, value), log);
    try {
      assertThat(process.waitFor(60, TimeUnit.SECONDS))
          .as("exits; log: %s", Files.readString(log))
          .isTrue();
    } finally {
      process.destroyForcibly();
    }
    assertThat(process.exitValue()).as(Files.readString(log)).isEqualTo(2);
    assertThat(Files.readAllLines(log))
        .singleElement()
        .asString()
        .startsWith(variable + "='" + value + "'");
  }

  @Test
  void jsonLogsAreOneJsonObjectPerLine() throws Exception {
    try (RedisProcess redis = RedisProcess.start()) {
      Path log = dir.resolve("json.log");
      Process process =
          start(
              Map.of(
                  "KUBECONFIG", unreachableApiServer().toString(),
                  "DELAYEDTASK_REDIS_URI", redis.uri(),
                  "DELAYEDTASK_HTTP_PORT", Integer.toString(Ports.freePort()),
                  "DELAYEDTASK_LOG_FORMAT", "json"),
              log);
      try {
        // Start-up and a failing API server give INFO and WARN lines, some with exceptions.
        await().atMost(Duration.ofSeconds(60)).until(() -> Files.readAllLines(log).size() >= 3);
      } finally {
        process.destroy();
        process.waitFor(30, TimeUnit.SECONDS);
      }
      List<String> lines = Files.readAllLines(log);
      ObjectMapper json = new ObjectMapper();
      assertThat(lines)
          .allSatisfy(line -> assertThat(json.readTree(line).isObject()).as(line).isTrue());
    }
  }

  @Test
  void anUnreachableApiServerLeavesTheProcessUpNotReadyAndLogsTheCauseOnce() throws Exception {
    try (RedisProcess redis = RedisProcess.start()) {
      int port = Ports.freePort();
      Path log = dir.resolve("unreachable.log");
      Path kubeconfig = unreachableApiServer();
      String server =
          Files.readAllLines(kubeconfig).stream()
              .filter(l -> l.contains("server:"))
              .findFirst()
              .orElseThrow()
              .replaceFirst(".*server: *", "");
      Process process =
          start(
              Map.of(
                  "KUBECONFIG", kubeconfig.toString(),
                  "DELAYEDTASK_REDIS_URI", redis.uri(),
                  "DELAYEDTASK_HTTP_PORT", Integer.toString(port)),
              log);
      try {
        await("/readyz answers")
            .atMost(Duration.ofSeconds(60))
            .ignoreExceptions()
            .until(() -> OperatorHttp.get(port, "/readyz").statusCode() == 503);
        // For the next 15 s (several retries with backoff): up, not ready, and the cause logged
        // once.
        await()
            .during(Duration.ofSeconds(15))
            .atMost(Duration.ofSeconds(20))
            .untilAsserted(
                () -> {
                  assertThat(process.isAlive()).isTrue();
                  assertThat(OperatorHttp.get(port, "/readyz").statusCode()).isEqualTo(503);
                });
        String text = Files.readString(log);
        assertThat(causeLines(text, server)).as(text).hasSize(1);
        // An operator that never started never led: SIGTERM stops it at once, with no attempt to
        // release a Lease through the client's retries (which held it ~20 s).
        process.destroy();
        assertThat(process.waitFor(10, TimeUnit.SECONDS))
            .as("stopped within 10 s of SIGTERM")
            .isTrue();
      } finally {
        process.destroyForcibly();
        process.waitFor(30, TimeUnit.SECONDS);
      }
    }
  }

  /** Lines (not stack-trace lines) of the log that name the API server's address. */
  private static List<String> causeLines(String log, String server) {
    String address = server.replaceFirst("^https?://", "");
    return log.lines()
        .filter(line -> line.contains(address))
        .filter(line -> !line.startsWith("\t"))
        .filter(line -> !line.startsWith("Caused by"))
        .toList();
  }

  /**
   * A kubeconfig naming a loopback port nothing listens on: every connection is refused at once.
   */
  private Path unreachableApiServer() {
    return Kubeconfig.write(
        dir.resolve("unreachable-kubeconfig.yaml"),
        "https://127.0.0.1:" + Ports.freePort(),
        "default");
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
        int port = Ports.freePort();
        Path log = Path.of("target", "operator-jar-it.log"); // kept for reading after a failure
        Process process =
            start(
                Map.of(
                    "KUBECONFIG",
                    kube.kubeconfig().toString(),
                    "DELAYEDTASK_REDIS_URI",
                    redis.uri(),
                    "DELAYEDTASK_NAMESPACES",
                    ns,
                    "DELAYEDTASK_LEASE_NAMESPACE",
                    ns,
                    "DELAYEDTASK_HTTP_PORT",
                    Integer.toString(port),
                    "DELAYEDTASK_IDENTITY",
                    "jar"),
                log);
        try {
          await()
              .atMost(Duration.ofSeconds(90))
              .until(() -> Files.readString(log).contains("Starting to fire due tasks"));
          create(kube.client(), task(ns, "from-the-jar", s -> s.setDelay("1s")));
          await()
              .atMost(Duration.ofSeconds(30))
              .until(() -> phase(kube.client(), ns, "from-the-jar").orElse(null) == Phase.Fired);
          assertThat(
                  kube.client()
                      .leases()
                      .inNamespace(ns)
                      .withName("delayed-task-operator")
                      .get()
                      .getSpec()
                      .getHolderIdentity())
              .isEqualTo("jar");

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
    ProcessBuilder builder =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-jar",
                JAR.toString())
            .redirectErrorStream(true)
            .redirectOutput(log.toFile());
    builder
        .environment()
        .keySet()
        .removeIf(key -> key.startsWith("DELAYEDTASK_") || key.equals("KUBECONFIG"));
    builder.environment().putAll(env);
    return builder.start();
  }
}
