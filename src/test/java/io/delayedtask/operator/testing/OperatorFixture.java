package io.delayedtask.operator.testing;

import io.delayedtask.operator.DelayedTaskOperator;
import io.delayedtask.operator.config.OperatorConfig;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Function;
import java.util.function.UnaryOperator;
import org.awaitility.Awaitility;

/**
 * Starts the real operator in-process against an API server (real or mock) and a real Redis, with a
 * short leader Lease but production's schedule resync: a reconcile that forgets to write or move
 * its Redis entry is not quietly repaired a second later. A test about the resync opts in to {@link
 * #SHORT_RESYNC}.
 */
public final class OperatorFixture {
  /** Add to {@link #env} for a test whose subject is the resync's repair. */
  public static final Map<String, String> SHORT_RESYNC = Map.of(OperatorConfig.RESYNC_SECONDS, "1");

  /** Everything the resync wrote back into Redis, by the operator's own count. */
  public static final String RESYNC_REPAIRS = "delayedtask_resync_repairs_total";

  private OperatorFixture() {}

  /**
   * Environment for an operator under test: its Redis, its identity, an ephemeral HTTP port, a 4 s
   * Lease.
   */
  public static Map<String, String> env(RedisProcess redis, String keyPrefix, String identity) {
    Map<String, String> env = new HashMap<>();
    env.put(OperatorConfig.REDIS_URI, redis.uri());
    env.put(OperatorConfig.KEY_PREFIX, keyPrefix);
    env.put(OperatorConfig.IDENTITY, identity);
    env.put(OperatorConfig.LEASE_NAMESPACE, "default");
    env.put(OperatorConfig.HTTP_PORT, "0");
    // Short leases, so a standby takes over within a few seconds (renew 2.7 s, retry 0.5 s).
    env.put(OperatorConfig.LEASE_DURATION_SECONDS, "4");
    return env;
  }

  /**
   * Sockets of every in-process operator's sink requests: loopback only, so a broken SSRF guard
   * fails to connect instead of sending a packet off this machine; what it refused is recorded.
   */
  public static final LoopbackOnlySockets SINK_SOCKETS = new LoopbackOnlySockets();

  /**
   * Redis probed often; never System.exit; sink names resolved by {@link TestResolver} and
   * connected through {@link #SINK_SOCKETS}; no OTEL_* variables (tracing off) whatever this JVM's
   * environment says. The short lease comes from {@link #env}.
   */
  public static DelayedTaskOperator.Options testOptions() {
    return DelayedTaskOperator.Options.inProcess()
        .withRedisProbeInterval(Duration.ofMillis(250))
        .withSinkNetwork(new TestResolver(), SINK_SOCKETS)
        .withTracingEnv(Map.of());
  }

  /** How many entries the operator's resync has repaired so far (its {@value #RESYNC_REPAIRS}). */
  public static double resyncRepairs(DelayedTaskOperator operator) {
    return OperatorHttp.metric(operator.httpPort(), RESYNC_REPAIRS, "");
  }

  /**
   * Starts it; without the admission policy's check unless {@code env} names the bindings (see
   * {@link #withoutAdmissionPolicy}).
   */
  public static DelayedTaskOperator start(Map<String, String> env, KubernetesClient client) {
    return start(env, client, UnaryOperator.identity());
  }

  /**
   * As {@link #start(Map, KubernetesClient)}, with {@code adjust} applied to {@link
   * #testOptions()}.
   */
  public static DelayedTaskOperator start(
      Map<String, String> env,
      KubernetesClient client,
      UnaryOperator<DelayedTaskOperator.Options> adjust) {
    Map<String, String> otel = new HashMap<>();
    env.forEach(
        (name, value) -> {
          if (name.startsWith("OTEL_")) {
            otel.put(name, value); // OpenTelemetry's own variables, for its SDK (trace/Tracing)
          }
        });
    return DelayedTaskOperator.start(
        OperatorConfig.fromEnv(withoutAdmissionPolicy(env)),
        client,
        adjust.apply(testOptions().withTracingEnv(otel)));
  }

  /**
   * {@code env} with {@code DELAYEDTASK_ADMISSION_POLICY=none} unless it sets the variable: the
   * mock has no ValidatingAdmissionPolicy, and the tests on a real API server whose subject is not
   * admission install none (AdmissionPolicyIT and AdmissionPolicyMissingIT install the shipped one
   * and run the operator with the check on).
   */
  public static Map<String, String> withoutAdmissionPolicy(Map<String, String> env) {
    Map<String, String> with = new HashMap<>(env);
    with.putIfAbsent(OperatorConfig.ADMISSION_POLICY, OperatorConfig.NO_ADMISSION_POLICY);
    return with;
  }

  /**
   * An operator of its own on a real API server: a new namespace {@code name-N}, a Redis, and the
   * operator (identity and key prefix {@code name}) watching only that namespace and keeping its
   * Lease there, so test classes sharing one server never see each other's tasks. Returns once it
   * leads. {@code extraEnv} adds to or overrides {@link #env}.
   */
  public static OnRealKubernetes startOnRealKubernetes(
      RealKubernetes kube, String name, Map<String, String> extraEnv) {
    return startOnRealKubernetes(kube, name, extraEnv, UnaryOperator.identity());
  }

  /**
   * As {@link #startOnRealKubernetes(RealKubernetes, String, Map)}, with {@code adjust} applied to
   * {@link #testOptions()} (an operator with a clock of its own, say).
   */
  public static OnRealKubernetes startOnRealKubernetes(
      RealKubernetes kube,
      String name,
      Map<String, String> extraEnv,
      UnaryOperator<DelayedTaskOperator.Options> adjust) {
    return startOnRealKubernetes(kube, name, namespace -> extraEnv, adjust);
  }

  /**
   * As {@link #startOnRealKubernetes(RealKubernetes, String, Map, UnaryOperator)}, with the extra
   * environment made from the new namespace's name (to watch another namespace beside it, say).
   */
  public static OnRealKubernetes startOnRealKubernetes(
      RealKubernetes kube,
      String name,
      Function<String, Map<String, String>> extraEnvFor,
      UnaryOperator<DelayedTaskOperator.Options> adjust) {
    String namespace = kube.createNamespace(name);
    RedisProcess redis = RedisProcess.start();
    KubernetesClient operatorClient = kube.newClient();
    DelayedTaskOperator operator =
        startLeading(operatorClient, redis, namespace, name, extraEnvFor.apply(namespace), adjust);
    return new OnRealKubernetes(kube, namespace, redis, operator, operatorClient);
  }

  /**
   * An operator that watches {@code namespace} alone and keeps its Lease there (identity and key
   * prefix {@code name}), on a Redis and an API server client the caller brings and closes: for a
   * test whose subject is one of them (a Redis with a password, or one it kills; a client holding
   * only a ServiceAccount's rights; the mock API server), or that starts a second operator on the
   * same Redis. Returns once it leads. {@code extraEnv} adds to or overrides {@link #env}.
   */
  public static DelayedTaskOperator startLeading(
      KubernetesClient operatorClient,
      RedisProcess redis,
      String namespace,
      String name,
      Map<String, String> extraEnv) {
    return startLeading(operatorClient, redis, namespace, name, extraEnv, UnaryOperator.identity());
  }

  /**
   * As {@link #startLeading(KubernetesClient, RedisProcess, String, String, Map)}, with {@code
   * adjust} applied to {@link #testOptions()}.
   */
  public static DelayedTaskOperator startLeading(
      KubernetesClient operatorClient,
      RedisProcess redis,
      String namespace,
      String name,
      Map<String, String> extraEnv,
      UnaryOperator<DelayedTaskOperator.Options> adjust) {
    Map<String, String> env = env(redis, name, "op-" + name);
    env.put(OperatorConfig.NAMESPACES, namespace);
    env.put(OperatorConfig.LEASE_NAMESPACE, namespace);
    env.putAll(extraEnv);
    DelayedTaskOperator operator = start(env, operatorClient, adjust);
    try {
      Awaitility.await("the operator leads")
          .atMost(Duration.ofSeconds(60))
          .until(operator::isFiring);
    } catch (RuntimeException | Error e) {
      operator.close(); // not left running behind a failed test
      throw e;
    }
    return operator;
  }

  /**
   * What {@link #startOnRealKubernetes} started; closing stops the operator, then closes its client
   * and its Redis.
   */
  public record OnRealKubernetes(
      RealKubernetes kube,
      String namespace,
      RedisProcess redis,
      DelayedTaskOperator operator,
      KubernetesClient operatorClient)
      implements AutoCloseable {
    @Override
    public void close() {
      operator.close();
      operatorClient.close();
      redis.close();
    }
  }
}
