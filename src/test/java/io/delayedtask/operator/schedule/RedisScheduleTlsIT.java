package io.delayedtask.operator.schedule;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.delayedtask.operator.testing.RedisProcess;
import java.io.IOException;
import java.net.ServerSocket;
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
 * embedded 6.2 binary is not; Debian's redis-server 7 is: set DELAYEDTASK_TEST_REDIS_SERVER) and
 * openssl for a throwaway certificate; skipped otherwise.
 */
class RedisScheduleTlsIT {

  @Test
  void scheduleOverTlsWithAuth() throws Exception {
    Path dir = Files.createTempDirectory("redis-tls-");
    assumeTrue(selfSignedCertificate(dir), "openssl is needed to make a test certificate");
    int tlsPort = freePort();
    RedisProcess redis;
    try {
      redis = RedisProcess.start("--tls-port", Integer.toString(tlsPort),
          "--tls-cert-file", dir.resolve("cert.pem").toString(),
          "--tls-key-file", dir.resolve("key.pem").toString(),
          "--tls-ca-cert-file", dir.resolve("cert.pem").toString(),
          "--tls-auth-clients", "no",
          "--requirepass", "tls-pass");
    } catch (IllegalStateException e) {
      assumeTrue(false, "this redis-server has no TLS support: " + e.getMessage());
      return;
    }
    try (redis) {
      String uri = "rediss://127.0.0.1:" + tlsPort;
      // Verification is on by default: a self-signed certificate is refused.
      try (RedisSchedule verifying = new RedisSchedule(
          RedisConnections.standalone(uri, Optional.of("tls-pass"), Duration.ofSeconds(3)), "tls", 1)) {
        assertThatThrownBy(() -> ScheduleProbe.serverTime(verifying))
            .isInstanceOf(ScheduleUnavailableException.class)
            .hasMessageContaining("Redis at " + uri + " is unavailable (connect)");
      }
      try (RedisSchedule schedule = new RedisSchedule(RedisConnections.standalone(uri + "?verifyPeer=NONE",
          Optional.of("tls-pass"), Duration.ofSeconds(3)), "tls", 1)) {
        Instant due = ScheduleProbe.serverTime(schedule).truncatedTo(ChronoUnit.MILLIS).minusSeconds(1);
        schedule.schedule("secure", due);
        assertThat(schedule.waitingEntries()).containsExactly(Map.entry("secure", due));
        assertThat(schedule.claimDue(10, Duration.ofMinutes(1)).entries()).extracting(ClaimedEntry::id)
            .containsExactly("secure");
      }
    }
  }

  private static boolean selfSignedCertificate(Path dir) throws InterruptedException {
    try {
      Process openssl = new ProcessBuilder("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes",
          "-keyout", dir.resolve("key.pem").toString(), "-out", dir.resolve("cert.pem").toString(),
          "-days", "1", "-subj", "/CN=127.0.0.1")
          .redirectErrorStream(true).redirectOutput(dir.resolve("openssl.log").toFile()).start();
      return openssl.waitFor() == 0;
    } catch (IOException e) {
      return false;
    }
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }
}
