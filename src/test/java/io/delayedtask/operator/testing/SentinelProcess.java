package io.delayedtask.operator.testing;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.sentinel.api.StatefulRedisSentinelConnection;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.awaitility.Awaitility;

/**
 * One real Redis Sentinel ({@code redis-server <conf> --sentinel}, same binary as {@link
 * RedisProcess}) watching one master with quorum 1, owned by a test. Timings are short so that a
 * failover completes within seconds of the master dying.
 */
public final class SentinelProcess implements AutoCloseable {
  private final int port;
  private final String masterName;
  private final Path workDir;
  private final Process process;
  private final RedisClient client = RedisClient.create();

  private SentinelProcess(int port, String masterName, Path workDir, Process process) {
    this.port = port;
    this.masterName = masterName;
    this.workDir = workDir;
    this.process = process;
  }

  /**
   * Starts a sentinel monitoring {@code master} as {@code masterName}: the master counts as down
   * after {@code downAfter} without an answer, and a failover that stalls is retried after twice
   * {@code failoverTimeout}.
   */
  public static SentinelProcess monitor(
      String masterName, RedisProcess master, Duration downAfter, Duration failoverTimeout) {
    int port = Ports.freePort(); // a sentinel has no cluster bus port
    try {
      Path dir = Files.createTempDirectory("sentinel-" + port + "-");
      Path conf = dir.resolve("sentinel.conf");
      Files.writeString(
          conf,
          String.join(
              "\n",
              "port " + port,
              "bind 127.0.0.1",
              "dir " + dir,
              "loglevel verbose",
              "sentinel monitor " + masterName + " 127.0.0.1 " + master.port() + " 1",
              "sentinel down-after-milliseconds " + masterName + " " + downAfter.toMillis(),
              "sentinel failover-timeout " + masterName + " " + failoverTimeout.toMillis(),
              ""));
      Process process =
          new ProcessBuilder(RedisProcess.binary().getAbsolutePath(), conf.toString(), "--sentinel")
              .redirectErrorStream(true)
              .redirectOutput(dir.resolve("sentinel.log").toFile())
              .start();
      SentinelProcess sentinel = new SentinelProcess(port, masterName, dir, process);
      Awaitility.await("sentinel on port " + port)
          .atMost(Duration.ofSeconds(20))
          .pollInterval(Duration.ofMillis(20))
          .until(
              () -> {
                if (!process.isAlive()) {
                  throw new IllegalStateException("the sentinel exited: " + sentinel.log());
                }
                return RedisProcess.accepts(port);
              });
      return sentinel;
    } catch (IOException e) {
      throw new UncheckedIOException("could not start a sentinel", e);
    }
  }

  /** The Lettuce URI an operator is given: {@code redis-sentinel://127.0.0.1:<port>#<master>}. */
  public String uri() {
    return "redis-sentinel://127.0.0.1:" + port + "#" + masterName;
  }

  /** The port of the server the sentinel names as master now. */
  public int masterPort() {
    SocketAddress address = ask(sentinel -> sentinel.getMasterAddrByName(masterName));
    return ((InetSocketAddress) address).getPort();
  }

  /**
   * The replicas the sentinel knows of, each as SENTINEL REPLICAS describes it (ip, port, flags,
   * ...).
   */
  public List<Map<String, String>> replicas() {
    return ask(sentinel -> sentinel.replicas(masterName));
  }

  /** The sentinel's own log (failover steps such as +switch-master), for failure messages. */
  public String log() {
    try {
      return Files.readString(workDir.resolve("sentinel.log"));
    } catch (IOException e) {
      return "(no sentinel log: " + e + ")";
    }
  }

  private <T> T ask(
      Function<io.lettuce.core.sentinel.api.sync.RedisSentinelCommands<String, String>, T>
          question) {
    try (StatefulRedisSentinelConnection<String, String> connection =
        client.connectSentinel(RedisURI.create("redis://127.0.0.1:" + port))) {
      return question.apply(connection.sync());
    }
  }

  @Override
  public void close() {
    client.shutdown();
    process.destroyForcibly();
    try {
      process.waitFor();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
