package io.delayedtask.operator.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The operator as users run it: {@code java -jar target/delayed-task-operator.jar} in its own JVM,
 * configured only through the environment, so a test can SIGKILL, SIGSTOP and SIGCONT it.
 */
public final class OperatorProcess implements AutoCloseable {
  private final String name;
  private final Map<String, String> environment;
  private final Path log;
  private final List<String> jvmOptions;
  private final Path jar;
  private Process process;

  private OperatorProcess(
      String name, Map<String, String> environment, Path log, List<String> jvmOptions, Path jar) {
    this.name = name;
    this.jar = jar;
    this.environment = Map.copyOf(environment);
    this.log = log;
    this.jvmOptions = List.copyOf(jvmOptions);
  }

  /** The JVM options of a test operator: small heap, fast start. */
  public static final List<String> TEST_JVM =
      List.of("-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1");

  /** The runnable jar that {@code mvn package} built; failsafe passes its path as a property. */
  public static Path jar() {
    Path jar = Path.of(System.getProperty("operator.jar", "target/delayed-task-operator.jar"));
    if (!Files.isRegularFile(jar)) {
      throw new IllegalStateException(
          jar + " is missing: run these tests with 'mvn verify' (after package)");
    }
    return jar;
  }

  /**
   * Starts an operator process named {@code name} (its DELAYEDTASK_IDENTITY) with the given
   * environment.
   */
  public static OperatorProcess start(String name, Map<String, String> environment) {
    return start(name, environment, TEST_JVM);
  }

  /**
   * As {@link #start(String, Map)} with other JVM options (the scale runs want a real heap and
   * JIT).
   */
  public static OperatorProcess start(
      String name, Map<String, String> environment, List<String> jvmOptions) {
    return start(name, environment, jvmOptions, jar());
  }

  /**
   * As {@link #start(String, Map, List)} from another build of the operator (a scale run's
   * baseline).
   */
  public static OperatorProcess start(
      String name, Map<String, String> environment, List<String> jvmOptions, Path jar) {
    try {
      Path log = Files.createTempFile("operator-" + name + "-", ".log");
      Map<String, String> env = new HashMap<>(OperatorFixture.withoutAdmissionPolicy(environment));
      env.putIfAbsent("DELAYEDTASK_IDENTITY", name);
      OperatorProcess operator = new OperatorProcess(name, env, log, jvmOptions, jar);
      operator.launch();
      return operator;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  public String name() {
    return name;
  }

  public long pid() {
    return process.pid();
  }

  public boolean isAlive() {
    return process.isAlive();
  }

  /**
   * The sum of every sample of {@code metric} (Prometheus text name, e.g. {@code
   * delayedtask_resync_repairs_total}) whose labels contain {@code labelFilter}, read from the
   * process's /metrics; 0 when absent.
   */
  public double metric(String metric, String labelFilter) {
    return OperatorHttp.metric(
        Integer.parseInt(environment.get("DELAYEDTASK_HTTP_PORT")), metric, labelFilter);
  }

  /**
   * Whether its /readyz answers 200: started, informers synced, Redis reachable (a pod the
   * Deployment counts).
   */
  public boolean ready() {
    try {
      return OperatorHttp.get(Integer.parseInt(environment.get("DELAYEDTASK_HTTP_PORT")), "/readyz")
              .statusCode()
          == 200;
    } catch (RuntimeException e) {
      return false;
    }
  }

  /** Waits for the process to end and returns its exit status. */
  public int waitForExit(Duration timeout) {
    try {
      if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
        throw new IllegalStateException(
            name + " did not exit within " + timeout + "; log:\n" + log());
      }
      return process.exitValue();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** SIGKILL: no shutdown hook runs, as when a node dies or the OOM killer strikes. */
  public void kill() {
    process.destroyForcibly();
    waitForExit(Duration.ofSeconds(30));
  }

  /**
   * SIGSTOP: the JVM freezes, holding its Lease and its Redis connections, as in a long GC pause.
   */
  public void pause() {
    signal("STOP");
  }

  /** SIGCONT after {@link #pause()}. */
  public void resume() {
    signal("CONT");
  }

  /** SIGTERM, as Kubernetes stops a pod, and waits for the process to end. */
  public int terminate() {
    process.destroy();
    return waitForExit(Duration.ofSeconds(30));
  }

  /** The process's standard output and error so far. */
  public String log() {
    try {
      return Files.readString(log);
    } catch (IOException e) {
      return "<log unreadable: " + e + ">";
    }
  }

  @Override
  public void close() {
    if (process != null && process.isAlive()) {
      resume();
      kill();
    }
  }

  private void launch() throws IOException {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(jvmOptions);
    command.addAll(List.of("-jar", jar.toString()));
    ProcessBuilder builder =
        new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
    // Only what the test sets: the operator must not pick up the developer's real cluster or Redis.
    builder
        .environment()
        .keySet()
        .removeIf(key -> key.startsWith("DELAYEDTASK_") || key.startsWith("KUBE"));
    builder.environment().putAll(environment);
    process = builder.start();
  }

  private void signal(String signal) {
    try {
      Process kill =
          new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid()))
              .inheritIO()
              .start();
      if (kill.waitFor() != 0) {
        throw new IllegalStateException("kill -" + signal + " " + process.pid() + " failed");
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
