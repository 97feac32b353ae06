package io.delayedtask.operator.schedule;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.delayedtask.operator.config.OperatorConfig;
import io.lettuce.core.RedisCredentials;
import io.lettuce.core.RedisURI;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** How configuration URIs become Lettuce URIs; no server needed (connections open lazily). */
class RedisConnectionsTest {
  private static final Duration TIMEOUT = Duration.ofSeconds(3);

  @Test
  void tlsUriTurnsOnSsl() {
    RedisURI uri =
        RedisConnections.redisUri("rediss://redis.example:6380", Optional.empty(), TIMEOUT);
    assertThat(uri.isSsl()).isTrue();
    assertThat(uri.getHost()).isEqualTo("redis.example");
    assertThat(uri.getPort()).isEqualTo(6380);
    assertThat(uri.getTimeout()).isEqualTo(TIMEOUT);
  }

  @Test
  void sentinelUriListsTheSentinelsAndTheMaster() {
    RedisURI uri =
        RedisConnections.redisUri(
            "redis-sentinel://s1:26379,s2:26380#mymaster", Optional.of("pw"), TIMEOUT);
    assertThat(uri.getSentinelMasterId()).isEqualTo("mymaster");
    assertThat(uri.getSentinels())
        .extracting(RedisURI::getHost, RedisURI::getPort)
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple("s1", 26379),
            org.assertj.core.groups.Tuple.tuple("s2", 26380));
    assertThat(new String(credentials(uri).getPassword())).isEqualTo("pw");
  }

  @Test
  void thePasswordFromTheConfigurationOverridesTheUrisAndKeepsTheUser() {
    RedisURI plain = RedisConnections.redisUri("redis://:old@h:6379", Optional.of("new"), TIMEOUT);
    assertThat(new String(credentials(plain).getPassword())).isEqualTo("new");

    RedisURI withUser =
        RedisConnections.redisUri("redis://alice:old@h:6379/2", Optional.of("new"), TIMEOUT);
    assertThat(credentials(withUser).getUsername()).isEqualTo("alice");
    assertThat(new String(credentials(withUser).getPassword())).isEqualTo("new");
    assertThat(withUser.getDatabase()).isEqualTo(2);

    RedisURI kept = RedisConnections.redisUri("redis://:inuri@h:6379", Optional.empty(), TIMEOUT);
    assertThat(new String(credentials(kept).getPassword())).isEqualTo("inuri");
  }

  @Test
  void openingFromConfigurationDoesNotConnectAndDescribesTheUrisWithoutSecrets() {
    OperatorConfig cluster =
        OperatorConfig.fromEnv(
            Map.of(
                OperatorConfig.REDIS_URI, "redis://:pw@h1:7000,h2:7001,h3:7002",
                OperatorConfig.REDIS_CLUSTER, "true"));
    try (RedisConnections connections = RedisConnections.open(cluster, TIMEOUT)) {
      assertThat(connections.description())
          .isEqualTo("redis://***@h1:7000,redis://***@h2:7001,redis://***@h3:7002");
      assertThat(connections.subscribed()).isFalse();
    }
    OperatorConfig tls =
        OperatorConfig.fromEnv(Map.of(OperatorConfig.REDIS_URI, "rediss://h:6380"));
    try (RedisConnections connections = RedisConnections.open(tls, TIMEOUT)) {
      assertThat(connections.description()).isEqualTo("rediss://h:6380");
    }
    OperatorConfig sentinel =
        OperatorConfig.fromEnv(Map.of(OperatorConfig.REDIS_URI, "redis-sentinel://s1:26379#m"));
    try (RedisConnections connections = RedisConnections.open(sentinel, TIMEOUT)) {
      assertThat(connections.description()).isEqualTo("redis-sentinel://s1:26379#m");
    }
  }

  @Test
  void aMalformedUriIsRejectedWithoutShowingThePassword() {
    assertThatThrownBy(
            () -> RedisConnections.redisUri("redis://:secret@", Optional.empty(), TIMEOUT))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("is not a Redis URI")
        .message()
        .doesNotContain("secret");
  }

  @Test
  void runIdIsReadFromInfoServer() {
    assertThat(
            RedisConnections.runId(
                "# Server\r\nredis_version:6.2.6\r\nrun_id:abc123\r\ntcp_port:6379\r\n"))
        .isEqualTo("abc123");
  }

  private static RedisCredentials credentials(RedisURI uri) {
    return uri.getCredentialsProvider().resolveCredentials().block();
  }
}
