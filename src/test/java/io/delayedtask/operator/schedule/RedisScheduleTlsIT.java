package io.delayedtask.operator.schedule;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.delayedtask.operator.testing.Ports;
import io.delayedtask.operator.testing.RedisProcess;
import io.delayedtask.operator.testing.RequiredTool;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The schedule over TLS ({@code rediss://}) with AUTH. Needs a redis-server built with TLS (the
 * embedded 6.2 binary is not; Debian's redis-server 7 is, and tools/install-test-packages.sh
 * installs it) and openssl for a throwaway certificate: skipped loudly without them, failed when
 * {@code CI=true} ({@link RequiredTool}).
 */
class RedisScheduleTlsIT {
  private static final String INSTALL_REDIS = "apt-get install -y redis-server";

  @Test
  void scheduleOverTlsWithAuth() throws Exception {
    Path redisServer =
        RequiredTool.find("redis-server", RedisProcess.BINARY_VARIABLE, INSTALL_REDIS);
    Path openssl =
        RequiredTool.find("openssl", "DELAYEDTASK_TEST_OPENSSL", "apt-get install -y openssl");
    Path dir = Files.createTempDirectory("redis-tls-");
    selfSignedCertificate(openssl, dir);
    int tlsPort = Ports.freePort();
    RedisProcess redis;
    try {
      redis =
          RedisProcess.startBinary(
              redisServer,
              "--tls-port",
              Integer.toString(tlsPort),
              "--tls-cert-file",
              dir.resolve("cert.pem").toString(),
              "--tls-key-file",
              dir.resolve("key.pem").toString(),
              "--tls-ca-cert-file",
              dir.resolve("cert.pem").toString(),
              "--tls-auth-clients",
              "no",
              "--requirepass",
              "tls-pass");
    } catch (IllegalStateException e) {
      RequiredTool.unusable(
          redisServer + " has no TLS support (" + e.getMessage().strip() + ")", INSTALL_REDIS);
      return;
    }
    try (redis) {
      String uri = "rediss://127.0.0.1:" + tlsPort;
      // Verification is on by default: a self-signed certificate is refused.
      try (RedisSchedule verifying =
          new RedisSchedule(
              RedisConnections.standalone(uri, Optional.of("tls-pass"), Duration.ofSeconds(3)),
              "tls",
              1)) {
        assertThatThrownBy(() -> ScheduleProbe.serverTime(verifying))
            .isInstanceOf(ScheduleUnavailableException.class)
            .hasMessageContaining("Redis at " + uri + " is unavailable (connect)");
      }
      try (RedisSchedule schedule =
          new RedisSchedule(
              RedisConnections.standalone(
                  uri + "?verifyPeer=NONE", Optional.of("tls-pass"), Duration.ofSeconds(3)),
              "tls",
              1)) {
        Instant due =
            ScheduleProbe.serverTime(schedule).truncatedTo(ChronoUnit.MILLIS).minusSeconds(1);
        schedule.schedule("secure", due);
        assertThat(schedule.waitingEntries()).containsExactly(Map.entry("secure", due));
        assertThat(schedule.claimDue(10, Duration.ofMinutes(1)).entries())
            .extracting(ClaimedEntry::id)
            .containsExactly("secure");
      }
    }
  }

  private static void selfSignedCertificate(Path openssl, Path dir) throws Exception {
    Path log = dir.resolve("openssl.log");
    Process process =
        new ProcessBuilder(
                openssl.toString(),
                "req",
                "-x509",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-keyout",
                dir.resolve("key.pem").toString(),
                "-out",
                dir.resolve("cert.pem").toString(),
                "-days",
                "1",
                "-subj",
                "/CN=127.0.0.1")
            .redirectErrorStream(true)
            .redirectOutput(log.toFile())
            .start();
    assertThat(process.waitFor()).as("openssl req: %s", Files.readString(log)).isZero();
  }
}
