package io.delayedtask.operator.faults;

import static org.awaitility.Awaitility.await;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.Phase;
import io.delayedtask.operator.config.OperatorConfig;
import io.delayedtask.operator.schedule.QueueRef;
import io.delayedtask.operator.schedule.RedisSchedule;
import io.delayedtask.operator.testing.FiringInvariants;
import io.delayedtask.operator.testing.FiringLedger;
import io.delayedtask.operator.testing.MockApiServer;
import io.delayedtask.operator.testing.OperatorProcess;
import io.delayedtask.operator.testing.Ports;
import io.delayedtask.operator.testing.RealKubernetes;
import io.delayedtask.operator.testing.RedisProcess;
import io.delayedtask.operator.testing.Tasks;
import io.delayedtask.operator.testing.TcpProxy;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * One world for a fault test: an API server, a real Redis (reached through a TCP proxy so the
 * connection can be cut), and operator processes started from the packaged jar. Closing it stops
 * everything and keeps each operator's log under target/fault-logs/ for the post-mortem.
 *
 * <p>The API server is the real one ({@link RealKubernetes}, a namespace of the lab's own) unless
 * the test must inject API faults on cue: then it is the mock ({@link MockApiServer}, {@link
 * #api}), the only one that can answer 409/429/500 bursts or hold a request. {@link
 * FaultLabExtension} picks the real server for test classes marked {@link
 * io.delayedtask.operator.testing.RequiresRealKubernetes}.
 */
final class FaultLab implements AutoCloseable {
  /**
   * The namespace of a lab on the mock API server (a lab on the real one has {@link #namespace}).
   */
  static final String NAMESPACE = "faults";

  static final String LEASE_NAME = "delayed-task-operator";

  /**
   * The operators' Lease (DELAYEDTASK_LEASE_DURATION_SECONDS): a SIGKILLed leader's lease runs out
   * after this. A third of production's 15 s, so the tests do not wait out production leases; the
   * renew deadline (2/3 of it) still leaves a loaded machine seconds to renew.
   */
  static final Duration LEASE_DURATION = Duration.ofSeconds(5);

  /**
   * How long a claim stays in flight (DELAYEDTASK_CLAIM_LEASE_SECONDS): half of production's 60 s,
   * still above the slowest firing these tests provoke while the leader lives (a few 3 s requests),
   * and well above the Lease, so a test can tell a takeover from a lease that ran out.
   */
  static final Duration CLAIM_LEASE = Duration.ofSeconds(30);

  /** The mock API server, for injecting faults; null when the lab runs on the real server. */
  final MockApiServer api;

  /** The real API server, or null on the mock. */
  final RealKubernetes kube;

  /** Where the lab's tasks, Lease and Jobs live. */
  final String namespace;

  final RedisProcess redis;
  final TcpProxy redisProxy;
  final FiringLedger ledger;
  private final String testName;
  private final Path kubeconfig;
  private final List<OperatorProcess> operators = new ArrayList<>();
  private RedisSchedule schedule;

  private FaultLab(String testName, boolean realApiServer) {
    this.testName = testName;
    this.redis = RedisProcess.start();
    this.redisProxy = new TcpProxy("127.0.0.1", redis.port());
    if (realApiServer) {
      this.api = null;
      this.kube = RealKubernetes.shared();
      this.namespace = kube.createNamespace("faults");
      this.kubeconfig = kube.kubeconfig();
    } else {
      this.api = MockApiServer.start();
      this.kube = null;
      this.namespace = NAMESPACE;
      try {
        this.kubeconfig =
            api.writeKubeconfig(Files.createTempFile("kubeconfig-", ".yaml"), NAMESPACE);
      } catch (IOException e) {
        throw new IllegalStateException(e);
      }
      api.client()
          .namespaces()
          .resource(
              new io.fabric8.kubernetes.api.model.NamespaceBuilder()
                  .withNewMetadata()
                  .withName(NAMESPACE)
                  .endMetadata()
                  .build())
          .create();
    }
    this.ledger = new FiringLedger(client(), namespace);
  }

  /** A lab on the mock API server, for tests that inject API faults. */
  static FaultLab start(String testName) {
    return new FaultLab(testName, false);
  }

  /** A lab on the real API server ({@code true}) or on the mock ({@code false}). */
  static FaultLab start(String testName, boolean realApiServer) {
    return new FaultLab(testName, realApiServer);
  }

  KubernetesClient client() {
    return api != null ? api.client() : kube.client();
  }

  /** The environment of an operator process in this lab; {@code extra} overrides. */
  Map<String, String> environment(String name, Map<String, String> extra) {
    Map<String, String> env = new HashMap<>();
    env.put("KUBECONFIG", kubeconfig.toString());
    // The JDK HTTP client and the mock server disagree on h2c over plain http.
    env.put("KUBERNETES_HTTP2_DISABLE", "true");
    env.put("DELAYEDTASK_REDIS_URI", "redis://127.0.0.1:" + redisProxy.port());
    env.put("DELAYEDTASK_NAMESPACES", namespace);
    env.put("DELAYEDTASK_LEASE_NAMESPACE", namespace);
    env.put("DELAYEDTASK_LEASE_NAME", LEASE_NAME);
    env.put("DELAYEDTASK_IDENTITY", name);
    env.put("DELAYEDTASK_RESYNC_SECONDS", "5");
    env.put("DELAYEDTASK_LEASE_DURATION_SECONDS", Long.toString(LEASE_DURATION.toSeconds()));
    env.put("DELAYEDTASK_CLAIM_LEASE_SECONDS", Long.toString(CLAIM_LEASE.toSeconds()));
    env.put("DELAYEDTASK_HTTP_PORT", Integer.toString(Ports.freePort()));
    env.putAll(extra);
    return env;
  }

  OperatorProcess startOperator(String name) {
    return startOperator(name, Map.of());
  }

  /** An operator with the production Lease timing (DELAYEDTASK_LEASE_DURATION_SECONDS unset). */
  OperatorProcess startOperatorWithDefaultLease(String name) {
    Map<String, String> env = environment(name, Map.of());
    env.remove("DELAYEDTASK_LEASE_DURATION_SECONDS");
    OperatorProcess operator = OperatorProcess.start(name, env);
    operators.add(operator);
    return operator;
  }

  OperatorProcess startOperator(String name, Map<String, String> extra) {
    OperatorProcess operator = OperatorProcess.start(name, environment(name, extra));
    operators.add(operator);
    return operator;
  }

  /** The identity in the Lease, if any (it may name a dead process until the lease runs out). */
  Optional<String> leaseHolder() {
    Lease lease = client().leases().inNamespace(namespace).withName(LEASE_NAME).get();
    return Optional.ofNullable(lease).map(l -> l.getSpec().getHolderIdentity());
  }

  /** Waits until a live operator of this lab holds the Lease, and returns it. */
  OperatorProcess awaitLiveLeader(Duration timeout) {
    return await("a live operator holds the lease")
        .atMost(timeout)
        .pollInterval(Duration.ofMillis(200))
        .until(this::liveLeader, Optional::isPresent)
        .orElseThrow();
  }

  Optional<OperatorProcess> liveLeader() {
    Optional<String> holder = leaseHolder();
    return operators.stream()
        .filter(OperatorProcess::isAlive)
        .filter(op -> holder.isPresent() && holder.get().equals(op.name()))
        .findFirst();
  }

  DelayedTask create(DelayedTask task) {
    return client().resource(task).create();
  }

  /**
   * Creates {@code count} tasks named {@code prefix-i}, due at {@code due.apply(i)}, with a Job
   * template or not.
   */
  List<String> createTasks(
      String prefix,
      int count,
      java.util.function.IntFunction<java.time.Instant> due,
      boolean withJob) {
    List<String> names = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      String name = prefix + "-" + i;
      create(
          withJob
              ? Tasks.withJob(namespace, name, due.apply(i))
              : Tasks.statusOnly(namespace, name, due.apply(i)));
      names.add(name);
    }
    return names;
  }

  /**
   * Waits until the operator has taken in every named task: it shows a due time (Scheduled, or
   * already further along if it fell due meanwhile).
   */
  void awaitScheduled(Collection<String> names, Duration timeout) {
    await("all " + names.size() + " tasks scheduled")
        .atMost(timeout)
        .pollInterval(Duration.ofMillis(300))
        .until(
            () -> {
              Map<String, DelayedTask> byName = new HashMap<>();
              client()
                  .resources(DelayedTask.class)
                  .inNamespace(namespace)
                  .list()
                  .getItems()
                  .forEach(task -> byName.put(task.getMetadata().getName(), task));
              return names.stream()
                  .filter(
                      name -> {
                        DelayedTask task = byName.get(name);
                        return task == null
                            || task.getStatus() == null
                            || task.getStatus().getDueTime() == null
                            || task.getStatus().getPhase() == null;
                      })
                  .toList();
            },
            List::isEmpty);
  }

  Phase phaseOf(String name) {
    return Tasks.phase(client(), namespace, name).orElse(null);
  }

  /**
   * What the schedule in Redis (read directly, not through the proxy) still holds: the names of the
   * lab's tasks waiting or claimed (in flight), as a snapshot.
   */
  synchronized ScheduleSnapshot scheduleSnapshot() {
    return new ScheduleSnapshot(
        names(schedule().waitingEntries().keySet()), names(schedule().inFlightIds()));
  }

  /**
   * The Redis key of the token bucket of the lab's queue {@code queue} (read directly, not through
   * the proxy).
   */
  synchronized String queueBucketKey(String queue) {
    return schedule().keys().bucket(new QueueRef(namespace, queue));
  }

  /** The schedule as the operators see it, with their default key prefix. */
  private synchronized RedisSchedule schedule() {
    if (schedule == null) {
      schedule =
          RedisSchedule.open(OperatorConfig.fromEnv(Map.of(OperatorConfig.REDIS_URI, redis.uri())));
    }
    return schedule;
  }

  /** Task names from schedule ids ({@code namespace/name/uid}) of this lab's namespace. */
  private List<String> names(Collection<String> ids) {
    return ids.stream()
        .map(id -> id.split("/"))
        .filter(parts -> parts.length == 3 && parts[0].equals(namespace))
        .map(parts -> parts[1])
        .toList();
  }

  record ScheduleSnapshot(List<String> waiting, List<String> inFlight) {
    List<String> pending() {
      List<String> all = new ArrayList<>(waiting);
      all.addAll(inFlight);
      return all;
    }
  }

  DelayedTask get(String name) {
    return client().resources(DelayedTask.class).inNamespace(namespace).withName(name).get();
  }

  /** Waits (without sleeping blind) until the wall clock has reached {@code instant}. */
  static void awaitInstant(java.time.Instant instant) {
    await("the clock reaches " + instant)
        .atMost(Duration.between(java.time.Instant.now(), instant).plusSeconds(5))
        .pollInterval(Duration.ofMillis(5))
        .until(() -> !java.time.Instant.now().isBefore(instant));
  }

  /** Waits until every named task shows a firedTime, then checks the three promises. */
  void awaitAllFiredOnceNotEarly(Collection<String> names, Duration timeout) {
    await("all " + names.size() + " tasks fired")
        .atMost(timeout)
        .pollInterval(Duration.ofMillis(500))
        .until(() -> FiringInvariants.notFiredYet(client(), namespace, names), List::isEmpty);
    FiringInvariants.assertFiredOnceNotEarly(client(), namespace, names, ledger, api);
  }

  /** A failure message tail: the last lines of every operator's log. */
  String logTails() {
    StringBuilder text = new StringBuilder();
    for (OperatorProcess operator : operators) {
      String log = operator.log();
      String[] lines = log.split("\n");
      text.append("\n--- ").append(operator.name()).append(" (last 40 lines) ---\n");
      for (int i = Math.max(0, lines.length - 40); i < lines.length; i++) {
        text.append(lines[i]).append('\n');
      }
    }
    return text.toString();
  }

  @Override
  public void close() {
    Path logs = Path.of("target", "fault-logs", testName);
    for (OperatorProcess operator : operators) {
      try {
        operator.close();
        Files.createDirectories(logs);
        Files.writeString(
            logs.resolve(operator.name() + "-" + operator.pid() + ".log"), operator.log());
      } catch (IOException | RuntimeException e) {
        // keep closing the rest
      }
    }
    ledger.close();
    if (schedule != null) {
      schedule.close();
    }
    redisProxy.close();
    redis.close();
    if (api != null) {
      api.close();
    }
  }
}
