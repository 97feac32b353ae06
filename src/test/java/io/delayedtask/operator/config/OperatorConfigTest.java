package io.delayedtask.operator.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.delayedtask.operator.api.v1alpha1.DelayedTaskSpec;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class OperatorConfigTest {

  @Test
  void defaults() {
    OperatorConfig config = OperatorConfig.fromEnv(Map.of("HOSTNAME", "pod-1"));
    assertThat(config.redisUri()).isEqualTo("redis://localhost:6379");
    assertThat(config.redisCluster()).isFalse();
    assertThat(config.redisShards()).isEqualTo(1);
    assertThat(config.redisPassword()).isEmpty();
    assertThat(config.keyPrefix()).isEqualTo("delayedtask");
    assertThat(config.namespaces()).isEmpty();
    assertThat(config.watchesAllNamespaces()).isTrue();
    assertThat(config.leaderElection()).isTrue();
    assertThat(config.leaseName()).isEqualTo("delayed-task-operator");
    assertThat(config.leaseNamespace()).isEqualTo("default");
    assertThat(config.identity()).isEqualTo("pod-1");
    assertThat(config.resyncInterval()).isEqualTo(Duration.ofSeconds(300));
    assertThat(config.httpPort()).isEqualTo(8080);
    assertThat(config.leaseDuration()).isEqualTo(Duration.ofSeconds(4));
    assertThat(config.claimLease()).isEqualTo(Duration.ofSeconds(60));
  }

  @Test
  void theDefaultLeaseIsWrittenUnderOnceASecondAndADeadLeaderIsWaitedForAtMostFourSeconds() {
    OperatorConfig config = OperatorConfig.fromEnv(Map.of());
    assertThat(config.leaseDuration()).isEqualTo(Duration.ofSeconds(4));
    assertThat(config.leaseRenewDeadline()).isEqualTo(Duration.ofMillis(2666));
    assertThat(config.leaseRetryPeriod())
        .as("one renewal (the Lease's one write) per period")
        .isEqualTo(Duration.ofMillis(1200))
        .isGreaterThan(Duration.ofSeconds(1));
    assertThat(config.leaseRenewDeadline())
        .as("one failed renewal is survived")
        .isGreaterThan(config.leaseRetryPeriod().multipliedBy(2));
  }

  @ParameterizedTest(name = "{0} s")
  @org.junit.jupiter.params.provider.ValueSource(ints = {2, 3, 4, 15, 3600})
  void renewDeadlineAndRetryPeriodFollowTheLeaseDuration(int seconds) {
    OperatorConfig config =
        OperatorConfig.fromEnv(
            Map.of("DELAYEDTASK_LEASE_DURATION_SECONDS", Integer.toString(seconds)));
    Duration lease = Duration.ofSeconds(seconds);
    assertThat(config.leaseDuration()).isEqualTo(lease);
    assertThat(config.leaseRenewDeadline()).isEqualTo(Duration.ofMillis(seconds * 2000L / 3));
    assertThat(config.leaseRetryPeriod())
        .isEqualTo(Duration.ofMillis(Math.max(100, seconds * 3000L / 10)));
    // What the fabric8 leader elector requires of them.
    assertThat(config.leaseRenewDeadline())
        .isLessThan(lease)
        .isGreaterThan(Duration.ofMillis((long) (config.leaseRetryPeriod().toMillis() * 1.2)));
  }

  @Test
  void defaultStartingDeadlineIsUnsetByDefaultAndTakesWholeSecondsUpToTenYears() {
    assertThat(OperatorConfig.fromEnv(Map.of()).defaultStartingDeadline()).isEmpty();
    assertThat(
            OperatorConfig.fromEnv(
                    Map.of("DELAYEDTASK_DEFAULT_STARTING_DEADLINE_SECONDS", " 3600 "))
                .defaultStartingDeadline())
        .contains(Duration.ofHours(1));
    assertThat(
            OperatorConfig.fromEnv(Map.of("DELAYEDTASK_DEFAULT_STARTING_DEADLINE_SECONDS", "0"))
                .defaultStartingDeadline())
        .contains(Duration.ZERO);
    assertThat(
            OperatorConfig.fromEnv(
                    Map.of("DELAYEDTASK_DEFAULT_STARTING_DEADLINE_SECONDS", "315360000"))
                .defaultStartingDeadline())
        .contains(Duration.ofSeconds(DelayedTaskSpec.MAX_SECONDS));
    for (String bad : List.of("-1", "1h", "315360001", "2.5")) {
      assertThatThrownBy(
              () ->
                  OperatorConfig.fromEnv(
                      Map.of("DELAYEDTASK_DEFAULT_STARTING_DEADLINE_SECONDS", bad)))
          .as(bad)
          .hasMessage(
              "DELAYEDTASK_DEFAULT_STARTING_DEADLINE_SECONDS='"
                  + bad
                  + "' is not valid; use a whole number "
                  + "of seconds from 0 to 315360000 (the startingDeadlineSeconds of tasks that set none), or leave it "
                  + "unset for no deadline");
    }
  }

  @Test
  void finishedTtlIsUnsetByDefaultAndTakesWholeSecondsFromZero() {
    assertThat(OperatorConfig.fromEnv(Map.of()).finishedTtl()).isEmpty();
    assertThat(
            OperatorConfig.fromEnv(Map.of("DELAYEDTASK_FINISHED_TTL_SECONDS", "0")).finishedTtl())
        .contains(Duration.ZERO);
    assertThat(
            OperatorConfig.fromEnv(Map.of("DELAYEDTASK_FINISHED_TTL_SECONDS", " 86400 "))
                .finishedTtl())
        .contains(Duration.ofDays(1));
    assertThatThrownBy(
            () -> OperatorConfig.fromEnv(Map.of("DELAYEDTASK_FINISHED_TTL_SECONDS", "-1")))
        .hasMessage(
            "DELAYEDTASK_FINISHED_TTL_SECONDS='-1' is not valid; use a whole number of seconds >= 0 "
                + "(the ttlSecondsAfterFinished of tasks that set none), or leave it unset to keep finished tasks");
  }

  @Test
  void identityIsRandomWithoutHostname() {
    String first = OperatorConfig.fromEnv(Map.of()).identity();
    String second = OperatorConfig.fromEnv(Map.of()).identity();
    assertThat(first).isNotBlank().isNotEqualTo(second);
  }

  @Test
  void leaseNamespaceDefaultsToThePodNamespace() {
    assertThat(OperatorConfig.fromEnv(Map.of("POD_NAMESPACE", "ops")).leaseNamespace())
        .isEqualTo("ops");
  }

  @Test
  void fullMap() {
    OperatorConfig config =
        OperatorConfig.fromEnv(
            Map.ofEntries(
                Map.entry("DELAYEDTASK_REDIS_URI", "redis://h1:7000,h2:7001,h3:7002"),
                Map.entry("DELAYEDTASK_REDIS_CLUSTER", "true"),
                Map.entry("DELAYEDTASK_REDIS_SHARDS", "3"),
                Map.entry("DELAYEDTASK_REDIS_PASSWORD", "s3cret"),
                Map.entry("DELAYEDTASK_KEY_PREFIX", "dt.prod"),
                Map.entry("DELAYEDTASK_NAMESPACES", "team-a, team-b"),
                Map.entry("DELAYEDTASK_LEADER_ELECTION", "false"),
                Map.entry("DELAYEDTASK_LEASE_NAME", "my-lease"),
                Map.entry("DELAYEDTASK_LEASE_NAMESPACE", "ops"),
                Map.entry("DELAYEDTASK_IDENTITY", "replica-2"),
                Map.entry("DELAYEDTASK_RESYNC_SECONDS", "60"),
                Map.entry("DELAYEDTASK_HTTP_PORT", "9090"),
                Map.entry("DELAYEDTASK_LEASE_DURATION_SECONDS", "30"),
                Map.entry("DELAYEDTASK_CLAIM_LEASE_SECONDS", "300")));
    assertThat(config.redisCluster()).isTrue();
    assertThat(config.redisShards()).isEqualTo(3);
    assertThat(config.redisUris())
        .containsExactly("redis://h1:7000", "redis://h2:7001", "redis://h3:7002");
    assertThat(config.redisPassword()).isEqualTo(Optional.of("s3cret"));
    assertThat(config.keyPrefix()).isEqualTo("dt.prod");
    assertThat(config.namespaces()).isEqualTo(Set.of("team-a", "team-b"));
    assertThat(config.leaderElection()).isFalse();
    assertThat(config.leaseName()).isEqualTo("my-lease");
    assertThat(config.leaseNamespace()).isEqualTo("ops");
    assertThat(config.identity()).isEqualTo("replica-2");
    assertThat(config.resyncInterval()).isEqualTo(Duration.ofSeconds(60));
    assertThat(config.httpPort()).isEqualTo(9090);
    assertThat(config.leaseDuration()).isEqualTo(Duration.ofSeconds(30));
    assertThat(config.leaseRenewDeadline()).isEqualTo(Duration.ofSeconds(20));
    assertThat(config.leaseRetryPeriod()).isEqualTo(Duration.ofSeconds(9));
    assertThat(config.claimLease()).isEqualTo(Duration.ofSeconds(300));
  }

  @Test
  void neverPrintsThePassword() {
    OperatorConfig config =
        OperatorConfig.fromEnv(
            Map.of(
                "DELAYEDTASK_REDIS_URI", "redis://user:uripass@h:6379",
                "DELAYEDTASK_REDIS_PASSWORD", "s3cret"));
    assertThat(config.toString()).doesNotContain("s3cret").doesNotContain("uripass");
  }

  static Stream<Arguments> badValues() {
    return Stream.of(
        Arguments.of("DELAYEDTASK_REDIS_URI", "http://h:6379"),
        Arguments.of("DELAYEDTASK_REDIS_URI", "redis://h1:1,h2:2"),
        Arguments.of("DELAYEDTASK_REDIS_CLUSTER", "yes"),
        Arguments.of("DELAYEDTASK_REDIS_SHARDS", "0"),
        Arguments.of("DELAYEDTASK_REDIS_SHARDS", "1025"),
        Arguments.of("DELAYEDTASK_KEY_PREFIX", "a:b"),
        Arguments.of("DELAYEDTASK_KEY_PREFIX", "{tag}"),
        Arguments.of("DELAYEDTASK_NAMESPACES", "team_a"),
        Arguments.of("DELAYEDTASK_LEADER_ELECTION", "on"),
        Arguments.of("DELAYEDTASK_LEASE_NAME", "Bad_Name"),
        Arguments.of("DELAYEDTASK_LEASE_NAMESPACE", "ops.prod"),
        Arguments.of("DELAYEDTASK_RESYNC_SECONDS", "0"),
        Arguments.of("DELAYEDTASK_RESYNC_SECONDS", "5m"),
        Arguments.of("DELAYEDTASK_FINISHED_TTL_SECONDS", "-1"),
        Arguments.of("DELAYEDTASK_FINISHED_TTL_SECONDS", "5m"),
        Arguments.of("DELAYEDTASK_FINISHED_TTL_SECONDS", "1.5"),
        Arguments.of("DELAYEDTASK_HTTP_PORT", "70000"),
        Arguments.of("DELAYEDTASK_HTTP_PORT", "http"),
        Arguments.of("DELAYEDTASK_LEASE_DURATION_SECONDS", "1"),
        Arguments.of("DELAYEDTASK_LEASE_DURATION_SECONDS", "3601"),
        Arguments.of("DELAYEDTASK_LEASE_DURATION_SECONDS", "15s"),
        Arguments.of("DELAYEDTASK_LEASE_DURATION_SECONDS", "7.5"),
        Arguments.of("DELAYEDTASK_CLAIM_LEASE_SECONDS", "0"),
        Arguments.of("DELAYEDTASK_CLAIM_LEASE_SECONDS", "-60"),
        Arguments.of("DELAYEDTASK_CLAIM_LEASE_SECONDS", "86401"),
        Arguments.of("DELAYEDTASK_CLAIM_LEASE_SECONDS", "1m"),
        Arguments.of("DELAYEDTASK_LOG_FORMAT", "yaml"),
        Arguments.of("DELAYEDTASK_LOG_LEVEL", "LOUD"),
        Arguments.of("DELAYEDTASK_SINK_ALLOWED_URIS", "ftp://files/"),
        Arguments.of("DELAYEDTASK_SINK_MAX_IN_FLIGHT", "0"),
        Arguments.of("DELAYEDTASK_ADMISSION_POLICY", "Policy_One"),
        Arguments.of("DELAYEDTASK_ADMISSION_POLICY", " , "),
        Arguments.of("DELAYEDTASK_ADMISSION_POLICY", "none,delayed-task-operator-author-rights"));
  }

  @ParameterizedTest(name = "{0}={1}")
  @MethodSource("badValues")
  void badValueNamesTheVariable(String variable, String value) {
    assertThatThrownBy(() -> OperatorConfig.fromEnv(Map.of(variable, value)))
        .isInstanceOf(ConfigException.class)
        .hasMessageStartingWith(variable)
        .satisfies(e -> assertThat(e.getMessage()).doesNotContain("\n"));
  }

  @Test
  void admissionPolicyBindingsDefaultToThePlainManifestsAndNoneTurnsTheCheckOff() {
    OperatorConfig defaults = OperatorConfig.fromEnv(Map.of());
    assertThat(defaults.admissionPolicyBindings())
        .containsExactly(
            "delayed-task-operator-author-rights", "delayed-task-operator-status-writer");
    assertThat(defaults.checksAdmissionPolicy()).isTrue();
    OperatorConfig named =
        OperatorConfig.fromEnv(Map.of("DELAYEDTASK_ADMISSION_POLICY", " a-b , c.d,a-b "));
    assertThat(named.admissionPolicyBindings()).containsExactly("a-b", "c.d");
    OperatorConfig none = OperatorConfig.fromEnv(Map.of("DELAYEDTASK_ADMISSION_POLICY", "none"));
    assertThat(none.admissionPolicyBindings()).isEmpty();
    assertThat(none.checksAdmissionPolicy()).isFalse();
    assertThat(none.toString()).contains("admissionPolicy=none");
  }

  @Test
  void sentinelIsRefusedInClusterMode() {
    assertThatThrownBy(
            () ->
                OperatorConfig.fromEnv(
                    Map.of(
                        "DELAYEDTASK_REDIS_URI",
                        "redis-sentinel://s1:26379#mymaster",
                        "DELAYEDTASK_REDIS_CLUSTER",
                        "true")))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("DELAYEDTASK_REDIS_URI");
  }
}
