package io.delayedtask.operator.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.delayedtask.operator.DelayedTaskOperator;
import io.delayedtask.operator.api.v1alpha1.Phase;
import io.delayedtask.operator.config.OperatorConfig;
import io.delayedtask.operator.testing.LogCapture;
import io.delayedtask.operator.testing.MockApiServer;
import io.delayedtask.operator.testing.OperatorFixture;
import io.delayedtask.operator.testing.RedisProcess;
import io.delayedtask.operator.testing.Tasks;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.output.StatusOutput;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandType;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * docs/operations.md's ACL user ("Which Redis in production"), created word for word on a real
 * Redis whose default user has another password: the operator runs as that user (its name in the
 * URI with a placeholder password, the password from DELAYEDTASK_REDIS_PASSWORD) and a task fires.
 * Redis checks a script's commands against the user running it, so one command the rule forgets
 * (TIME, PUBLISH, ...) stops the firing, and a user without the ACL's TIME never fires, which the
 * second half shows.
 */
class RedisAclUserIT {
  private static final Duration TIMEOUT = Duration.ofSeconds(60);

  /** The default user's: an operator that fell back to it would be refused, not pass unnoticed. */
  private static final String ADMIN_PASSWORD = "admin-pw-5e1d";

  @Test
  void theOperatorFiresAsTheAclUserOperationsMdDescribes() throws IOException {
    List<String> rule = aclRuleFromOperationsMd();
    String user = rule.get(2);
    String password =
        rule.stream().filter(w -> w.startsWith(">")).findFirst().orElseThrow().substring(1);
    try (MockApiServer api = MockApiServer.start();
        RedisProcess redis = RedisProcess.start("--requirepass", ADMIN_PASSWORD)) {
      setUser(redis, rule);
      try (LogCapture log = LogCapture.start()) {
        assertThat(fires(api, redis, user, password, "acl")).as("as the documented user").isTrue();
        // The operator's warnings, not the client's debug lines: Lettuce tries optional CLIENT
        // subcommands in its handshake and goes on without them.
        assertThat(log.events())
            .filteredOn(e -> e.getLevel().isGreaterOrEqual(ch.qos.logback.classic.Level.WARN))
            .extracting(e -> e.getFormattedMessage())
            .as("no command refused to the documented user (the resync's ZSCAN among them)")
            .noneMatch(
                line ->
                    line.contains("NOPERM")
                        || line.contains("can't run this command")
                        || line.contains("no permissions"));
      }

      List<String> withoutTime = rule.stream().filter(w -> !w.equals("+time")).toList();
      setUser(
          redis,
          concat(List.of("ACL", "SETUSER", "no-time"), withoutTime.subList(3, withoutTime.size())));
      assertThat(fires(api, redis, "no-time", password, "acl-no-time"))
          .as("a rule without a command the scripts call does not do")
          .isFalse();
    }
  }

  /**
   * Whether a status-only task due in 2 s fires within 20 s, the operator connecting as {@code
   * user}.
   */
  private static boolean fires(
      MockApiServer api, RedisProcess redis, String user, String password, String ns) {
    Map<String, String> env = OperatorFixture.env(redis, "delayedtask", "op-" + ns);
    env.put(
        OperatorConfig.REDIS_URI,
        redis.uri().replace("redis://", "redis://" + user + ":from-secret@"));
    env.put(OperatorConfig.REDIS_PASSWORD, password);
    env.put(OperatorConfig.NAMESPACES, ns);
    env.put(OperatorConfig.LEASE_NAMESPACE, ns);
    try (DelayedTaskOperator operator = OperatorFixture.start(env, api.newClient())) {
      await("the operator leads").atMost(TIMEOUT).until(operator::isFiring);
      api.client()
          .resource(Tasks.statusOnly(ns, "due-soon", Instant.now().plusSeconds(2)))
          .create();
      try {
        await("fired")
            .atMost(Duration.ofSeconds(20))
            .until(
                () -> Tasks.phase(api.client(), ns, "due-soon"),
                p -> p.equals(Optional.of(Phase.Fired)));
        return true;
      } catch (org.awaitility.core.ConditionTimeoutException e) {
        return false;
      }
    }
  }

  private static List<String> aclRuleFromOperationsMd() throws IOException {
    String line =
        Files.readAllLines(Path.of("docs", "operations.md")).stream()
            .filter(l -> l.startsWith("ACL SETUSER "))
            .findFirst()
            .orElseThrow();
    return List.of(line.split(" "));
  }

  private static void setUser(RedisProcess redis, List<String> words) {
    RedisClient client =
        RedisClient.create(redis.uri().replace("redis://", "redis://:" + ADMIN_PASSWORD + "@"));
    try (StatefulRedisConnection<String, String> connection = client.connect()) {
      CommandArgs<String, String> args = new CommandArgs<>(StringCodec.UTF8);
      words.subList(1, words.size()).forEach(args::add);
      String answer =
          connection.sync().dispatch(CommandType.ACL, new StatusOutput<>(StringCodec.UTF8), args);
      assertThat(answer).as("%s", words).isEqualTo("OK");
    } finally {
      client.shutdown();
    }
  }

  private static List<String> concat(List<String> a, List<String> b) {
    return java.util.stream.Stream.concat(a.stream(), b.stream()).toList();
  }
}
