package io.delayedtask.operator.testing;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.awaitility.Awaitility;
import redis.embedded.core.ExecutableProvider;

/**
 * A real redis-server process on a free loopback port, owned by a test.
 *
 * <p>The binary is the one named by {@code DELAYEDTASK_TEST_REDIS_SERVER} (for example
 * /usr/bin/redis-server) or else the Redis 6.2 that embedded-redis ships, so {@code mvn -B verify}
 * needs nothing installed. The process is ours rather than embedded-redis's so tests can SIGKILL,
 * SIGSTOP and restart it on the same port, and start cluster nodes.
 */
public final class RedisProcess implements AutoCloseable {
  public static final String BINARY_VARIABLE = "DELAYEDTASK_TEST_REDIS_SERVER";

  private final File binary;
  private final int port;
  private final List<String> extraArgs;
  private final Path workDir;
  private Process process;

  private RedisProcess(File binary, int port, List<String> extraArgs) {
    this.binary = binary;
    this.port = port;
    this.extraArgs = List.copyOf(extraArgs);
    try {
      this.workDir = Files.createTempDirectory("redis-" + port + "-");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Starts a standalone Redis with no persistence on a free port. */
  public static RedisProcess start(String... extraArgs) {
    return startBinary(binary().toPath(), extraArgs);
  }

  /**
   * Starts this redis-server binary (a TLS-capable one, ...) standalone with no persistence on a
   * free port.
   */
  public static RedisProcess startBinary(Path binary, String... extraArgs) {
    RedisProcess redis =
        new RedisProcess(binary.toFile(), freePortWithBusPort(), List.of(extraArgs));
    redis.startProcess();
    return redis;
  }

  /** Starts a Redis Cluster node (cluster-enabled, no slots yet) on a free port. */
  public static RedisProcess startClusterNode(String... extraArgs) {
    List<String> args =
        new ArrayList<>(List.of("--cluster-enabled", "yes", "--cluster-node-timeout", "2000"));
    args.addAll(List.of(extraArgs));
    return start(args.toArray(String[]::new));
  }

  public int port() {
    return port;
  }

  public String uri() {
    return "redis://127.0.0.1:" + port;
  }

  public long pid() {
    return process.pid();
  }

  public boolean isAlive() {
    return process != null && process.isAlive();
  }

  /** SIGKILL: the process dies at once and, with persistence off, loses every key. */
  public void kill() {
    if (process != null) {
      process.destroyForcibly();
      waitForExit();
    }
  }

  /**
   * Starts the same server again on the same port and working directory: empty unless persistence
   * was configured, while a cluster node keeps its nodes.conf (node id, slots, peers) and rejoins.
   */
  public void restart() {
    kill();
    startProcess();
  }

  /** Sends a POSIX signal (STOP, CONT, ...) to the server. */
  public void signal(String name) {
    try {
      Process kill =
          new ProcessBuilder("kill", "-" + name, Long.toString(process.pid())).inheritIO().start();
      if (kill.waitFor() != 0) {
        throw new IllegalStateException("kill -" + name + " " + process.pid() + " failed");
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  @Override
  public void close() {
    kill();
  }

  private void startProcess() {
    List<String> command = new ArrayList<>();
    command.add(binary.getAbsolutePath());
    command.addAll(
        List.of(
            "--port",
            Integer.toString(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--protected-mode",
            "no",
            "--dir",
            workDir.toString(),
            "--daemonize",
            "no",
            "--loglevel",
            "warning"));
    command.addAll(extraArgs);
    try {
      process =
          new ProcessBuilder(command)
              .redirectErrorStream(true)
              .redirectOutput(workDir.resolve("redis.log").toFile())
              .start();
    } catch (IOException e) {
      throw new UncheckedIOException("could not start " + command, e);
    }
    Awaitility.await("redis-server on port " + port)
        .atMost(Duration.ofSeconds(20))
        .pollInterval(Duration.ofMillis(20))
        .until(
            () -> {
              if (!process.isAlive()) {
                throw new IllegalStateException(
                    "redis-server exited: " + Files.readString(workDir.resolve("redis.log")));
              }
              return accepts(port);
            });
  }

  private void waitForExit() {
    try {
      process.waitFor();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Whether something listens on this loopback port (a Redis or sentinel process that is up). */
  public static boolean accepts(int port) {
    try (Socket socket = new Socket()) {
      socket.connect(new InetSocketAddress("127.0.0.1", port), 200);
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  /**
   * The redis-server binary tests run (also started with --sentinel by {@link SentinelProcess}):
   * {@code DELAYEDTASK_TEST_REDIS_SERVER}, else the one embedded-redis ships.
   */
  public static File binary() {
    String configured = System.getenv(BINARY_VARIABLE);
    try {
      if (configured != null && !configured.isBlank()) {
        return new File(configured);
      }
      return ExecutableProvider.newJarResourceProvider().get();
    } catch (IOException e) {
      throw new UncheckedIOException(
          "could not find a redis-server binary; set " + BINARY_VARIABLE, e);
    }
  }

  /**
   * Not plain {@link Ports#freePort}: a cluster node also needs its bus port (port + 10000) free
   * and valid.
   */
  private static int freePortWithBusPort() {
    for (int attempt = 0; attempt < 100; attempt++) {
      int port = Ports.freePort();
      if (port < 55_535 && isFree(port + 10_000)) {
        return port;
      }
    }
    throw new IllegalStateException("no free port pair found");
  }

  private static boolean isFree(int port) {
    try (ServerSocket ignored = new ServerSocket(port)) {
      return true;
    } catch (IOException e) {
      return false;
    }
  }
}
