package io.delayedtask.operator.scale;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.DelayedTaskStatus;
import io.delayedtask.operator.testing.OperatorProcess;
import io.delayedtask.operator.testing.Ports;
import io.delayedtask.operator.testing.Tasks;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.time.Duration;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * What the handover and failover runs share: operator processes with the production Lease (4 s,
 * nothing set), started and stopped as a Deployment's pods are; a stream of status-only tasks due
 * every {@link #EVERY}; each task's firedTime as a harness watch sees it; and every state of the
 * leader Lease, as a watch delivers it.
 */
final class HandoverLab implements AutoCloseable {
  static final String NS = OperatorScaleLab.NAMESPACE;
  static final String LEASE = "delayed-task-operator";
  static final Duration EVERY = Duration.ofMillis(100);

  /**
   * How long before its due time each task of the stream is created: well above its way to Redis.
   */
  static final Duration LEAD = Duration.ofSeconds(20);

  static final int CREATORS = 4;

  /** The pods' JVM: the chart's limit (512 MiB) at its 60 % heap. */
  static final List<String> JVM = List.of("-Xmx300m", "-XX:+UseG1GC");

  final OperatorScaleLab lab;
  private final Map<String, OperatorProcess> pods = new ConcurrentHashMap<>();
  private final Map<String, Integer> ports = new ConcurrentHashMap<>();
  private final OperatorFiringScale.Firings fired = new OperatorFiringScale.Firings();

  /** Every firedTime seen, to find the first after an instant without parsing them all again. */
  private final ConcurrentSkipListSet<Instant> firedTimes = new ConcurrentSkipListSet<>();

  private final SharedIndexInformer<DelayedTask> informer;
  private final List<LeaseState> lease = new CopyOnWriteArrayList<>();
  private final Watch leaseWatch;
  private final Map<String, Instant> dueByName = new ConcurrentHashMap<>();
  private final java.util.Set<String> createdLate = ConcurrentHashMap.newKeySet();
  private volatile boolean streaming;
  private Thread stream;
  private final ExecutorService creators = Executors.newFixedThreadPool(CREATORS);
  private int started;
  private final java.util.Set<String> stopped = ConcurrentHashMap.newKeySet();
  private final List<String> restarts = new CopyOnWriteArrayList<>();
  private final java.util.concurrent.ScheduledExecutorService kubelet =
      Executors.newSingleThreadScheduledExecutor(
          runnable -> {
            Thread thread = new Thread(runnable, "kubelet");
            thread.setDaemon(true);
            return thread;
          });

  /**
   * One state of the Lease: when the harness's watch got it, its holder ("" when released), its
   * times.
   */
  record LeaseState(
      Instant seenAt, String holder, Instant acquireTime, Instant renewTime, int transitions) {}

  HandoverLab(OperatorScaleLab lab) {
    this.lab = lab;
    informer =
        lab.client()
            .resources(DelayedTask.class)
            .inNamespace(NS)
            .inform(
                new TaskVersions() {
                  @Override
                  void record(DelayedTask task) {
                    fired.record(task);
                    if (task.getStatus() != null && task.getStatus().getFiredTime() != null) {
                      firedTimes.add(Instant.parse(task.getStatus().getFiredTime()));
                    }
                  }
                });
    kubelet.scheduleWithFixedDelay(this::restartExited, 200, 200, TimeUnit.MILLISECONDS);
    leaseWatch =
        lab.client()
            .leases()
            .inNamespace(NS)
            .withName(LEASE)
            .watch(
                new Watcher<>() {
                  @Override
                  public void eventReceived(Action action, Lease l) {
                    String holder = l.getSpec().getHolderIdentity();
                    Integer transitions = l.getSpec().getLeaseTransitions();
                    lease.add(
                        new LeaseState(
                            Instant.now(),
                            holder == null ? "" : holder,
                            instant(l.getSpec().getAcquireTime()),
                            instant(l.getSpec().getRenewTime()),
                            transitions == null ? 0 : transitions));
                  }

                  @Override
                  public void onClose(WatcherException cause) {
                    if (cause != null) {
                      System.out.println("WARNING: the harness's Lease watch closed: " + cause);
                    }
                  }
                });
  }

  private static Instant instant(ZonedDateTime time) {
    return time == null ? null : time.toInstant();
  }

  /**
   * What both runs begin with: two ready pods, one leading, and the stream of tasks started and
   * falling due under that leader for a while; returns the instant the measurement starts.
   */
  Instant startTwoPodsAndStream() throws InterruptedException {
    startReadyPod();
    startReadyPod();
    awaitLiveLeader(Duration.ofSeconds(60));
    startStream();
    Thread.sleep(
        LEAD.plusSeconds(5).toMillis()); // the stream's first tasks fall due under one leader
    return Instant.now();
  }

  /**
   * Starts the next pod (op-0, op-1, ...) and waits until it is ready, as the Deployment does;
   * returns its name.
   */
  String startReadyPod() throws InterruptedException {
    String name = "op-" + started++;
    int port = Ports.freePort();
    ports.put(name, port);
    OperatorProcess pod = launch(name);
    lab.awaitReady(pod, port);
    return name;
  }

  private OperatorProcess launch(String name) {
    OperatorProcess pod =
        lab.startOperator(name, ports.get(name), OperatorProcess.jar(), Map.of(), JVM);
    pods.put(name, pod);
    return pod;
  }

  /**
   * The kubelet's part: a pod's process that ended without being told to (a leader that lost its
   * Lease exits on purpose, to come back as a standby) is started again under the same name.
   * Printed and counted, since on a starved machine it says the Lease could not be renewed.
   */
  private void restartExited() {
    pods.forEach(
        (name, pod) -> {
          if (!pod.isAlive() && !stopped.contains(name)) {
            String said =
                pod.log().contains("Lost the leader lease")
                    ? "lost the Lease and exited"
                    : "exited";
            restarts.add(Instant.now() + " " + name);
            System.out.printf("%s %s %s; the kubelet's restart%n", Instant.now(), name, said);
            launch(name);
          }
        });
  }

  /**
   * SIGTERM, as the kubelet stops a pod after its preStop; returns once it exited, with the ms it
   * took.
   */
  long terminate(String name) {
    stopped.add(name);
    Instant from = Instant.now();
    pods.get(name).terminate();
    return Duration.between(from, Instant.now()).toMillis();
  }

  /** SIGKILL; returns once the process is gone. */
  void kill(String name) {
    stopped.add(name);
    pods.get(name).kill();
  }

  /**
   * Restarts of pods that exited on their own so far (their Lease lost under load), one line each.
   */
  List<String> restarts() {
    return List.copyOf(restarts);
  }

  /** The holder named in the Lease now, read from the API server ("" when none). */
  String holderNow() {
    Lease now = lab.client().leases().inNamespace(NS).withName(LEASE).get();
    return now == null || now.getSpec().getHolderIdentity() == null
        ? ""
        : now.getSpec().getHolderIdentity();
  }

  /**
   * Waits (a measuring loop) until a live pod of this run holds the Lease, and returns its name.
   */
  String awaitLiveLeader(Duration atMost) throws InterruptedException {
    long deadline = System.nanoTime() + atMost.toNanos();
    while (System.nanoTime() < deadline) {
      String holder = holderNow();
      OperatorProcess pod = pods.get(holder);
      if (pod != null && pod.isAlive() && !stopped.contains(holder)) {
        return holder;
      }
      Thread.sleep(50);
    }
    throw new IllegalStateException(
        "no live pod leads after " + atMost + "; Lease holder '" + holderNow() + "'");
  }

  /** The pods not stopped by the run (a restarting one included), by name. */
  List<String> livePods() {
    return pods.keySet().stream().filter(name -> !stopped.contains(name)).sorted().toList();
  }

  /** Waits (a measuring loop) until the named pod answers /readyz. */
  void awaitReady(String name) throws InterruptedException {
    lab.awaitReady(pods.get(name), ports.get(name));
  }

  /**
   * The first Lease state the watch saw after {@code from} naming {@code holder}, waited for (a
   * measuring loop) at most {@code atMost}.
   */
  Optional<LeaseState> awaitLeaseHeldBy(String holder, Instant from, Duration atMost)
      throws InterruptedException {
    long deadline = System.nanoTime() + atMost.toNanos();
    while (System.nanoTime() < deadline) {
      Optional<LeaseState> state =
          lease.stream()
              .filter(s -> !s.seenAt().isBefore(from))
              .filter(s -> s.holder().equals(holder))
              .findFirst();
      if (state.isPresent()) {
        return state;
      }
      Thread.sleep(10);
    }
    return Optional.empty();
  }

  /** The first Lease state after {@code from} with no holder (a release), if the watch saw one. */
  Optional<LeaseState> releasedAfter(Instant from) {
    return lease.stream()
        .filter(s -> !s.seenAt().isBefore(from))
        .filter(s -> s.holder().isEmpty())
        .findFirst();
  }

  /**
   * The earliest firedTime after {@code from}, waited for (a measuring loop) at most {@code
   * atMost}.
   */
  Optional<Instant> awaitFiringAfter(Instant from, Duration atMost) throws InterruptedException {
    long deadline = System.nanoTime() + atMost.toNanos();
    while (System.nanoTime() < deadline) {
      Instant first = firedTimes.higher(from);
      if (first != null) {
        return Optional.of(first);
      }
      Thread.sleep(10);
    }
    return Optional.empty();
  }

  /**
   * Starts creating one status-only task every {@link #EVERY}, each due {@link #LEAD} after the
   * instant its creation is sent, until {@link #stopStreamAndAwaitFirings()}. The creations go
   * through {@link #CREATORS} threads, so a slow answer from a loaded API server does not hold the
   * next ones back.
   */
  void startStream() {
    streaming = true;
    Instant firstDue = Instant.now().plus(LEAD);
    stream =
        new Thread(
            () -> {
              for (long i = 0; streaming; i++) {
                Instant due = firstDue.plus(EVERY.multipliedBy(i));
                long wait = Duration.between(Instant.now(), due.minus(LEAD)).toNanos();
                try {
                  if (wait > 0) {
                    Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000)); // pacing the load
                  }
                } catch (InterruptedException e) {
                  return;
                }
                String name = "due-" + i;
                dueByName.put(name, due);
                creators.submit(
                    () -> {
                      try {
                        lab.client().resource(Tasks.statusOnly(NS, name, due)).create();
                        if (!Instant.now().isBefore(due.minusSeconds(1))) {
                          createdLate.add(
                              name); // its lag would be the harness's, not the operator's
                        }
                      } catch (RuntimeException e) {
                        dueByName.remove(name);
                        System.out.println("WARNING: creating " + name + " failed: " + e);
                      }
                    });
              }
            },
            "due-stream");
    stream.setDaemon(true);
    stream.start();
  }

  /** Stops the stream and waits (at most a minute) until every task it created has fired. */
  void stopStreamAndAwaitFirings() throws InterruptedException {
    streaming = false;
    stream.interrupt();
    stream.join(10_000);
    creators.shutdown();
    creators.awaitTermination(1, TimeUnit.MINUTES);
    long deadline = System.nanoTime() + Duration.ofMinutes(1).plus(LEAD).toNanos();
    while (fired.count() < dueByName.size() && System.nanoTime() < deadline) {
      Thread.sleep(100);
    }
  }

  /**
   * firedTime - dueTime in ms of the stream's tasks due in [from, to) (created in time), sorted.
   */
  List<Long> lags(Instant from, Instant to) {
    List<Long> lags = new ArrayList<>();
    fired.last.forEach(
        (name, status) -> {
          Instant due = Instant.parse(status.getDueTime());
          if (!due.isBefore(from) && due.isBefore(to) && !createdLate.contains(name)) {
            lags.add(Duration.between(due, Instant.parse(status.getFiredTime())).toMillis());
          }
        });
    lags.sort(null);
    return lags;
  }

  /** The stream's task due in [from, to) that fired latest after its due time, with its lag. */
  Optional<Map.Entry<String, Long>> worst(Instant from, Instant to) {
    Map.Entry<String, Long> worst = null;
    for (Map.Entry<String, DelayedTaskStatus> e : fired.last.entrySet()) {
      Instant due = Instant.parse(e.getValue().getDueTime());
      if (due.isBefore(from) || !due.isBefore(to) || createdLate.contains(e.getKey())) {
        continue;
      }
      long lag = Duration.between(due, Instant.parse(e.getValue().getFiredTime())).toMillis();
      if (worst == null || lag > worst.getValue()) {
        worst = Map.entry(e.getKey(), lag);
      }
    }
    return Optional.ofNullable(worst);
  }

  /** Totals of the whole stream: created, fired, fired twice, early, created late. */
  void printStreamTotals() {
    long early =
        fired.last.values().stream()
            .filter(s -> Instant.parse(s.getFiredTime()).isBefore(Instant.parse(s.getDueTime())))
            .count();
    System.out.printf(
        "stream: %,d tasks created (one due every %d ms), %,d fired, fired more than once: %d, "
            + "fired early: %d, created less than 1 s before due (left out of the lags): %d%n",
        dueByName.size(),
        EVERY.toMillis(),
        fired.count(),
        fired.firedTwice().size(),
        early,
        createdLate.size());
  }

  /**
   * The operators' Lease writes (create, update, patch) a second over [from, to], from the audit
   * log: every pod's, renewals, acquisitions and releases alike.
   */
  double leaseWritesPerSecond(Instant from, Instant to) {
    long writes =
        lab.target.operatorRequests(from, to).entrySet().stream()
            .filter(e -> e.getKey().matches("(create|update|patch) leases"))
            .mapToLong(Map.Entry::getValue)
            .sum();
    return writes / (Duration.between(from, to).toMillis() / 1000.0);
  }

  /** The Lease requests of the operators over [from, to], by kind, with their rate a second. */
  void printLeaseRequests(Instant from, Instant to) {
    double seconds = Duration.between(from, to).toMillis() / 1000.0;
    System.out.printf("the operators' Lease requests over %.0f s (audit log):%n", seconds);
    lab.target
        .operatorRequests(from, to)
        .forEach(
            (kind, n) -> {
              if (kind.contains("leases")) {
                System.out.printf("  %-28s %7d  %.2f/s%n", kind, n, n / seconds);
              }
            });
    System.out.printf(
        "  Lease writes (create, update, patch): %.2f/s%n", leaseWritesPerSecond(from, to));
  }

  static String ms(List<Long> sorted) {
    return sorted.isEmpty()
        ? "none"
        : String.format(
            "n=%d p50 %d ms, p99 %d ms, max %d ms",
            sorted.size(),
            OperatorScaleLab.percentile(sorted, 0.5),
            OperatorScaleLab.percentile(sorted, 0.99),
            sorted.get(sorted.size() - 1));
  }

  @Override
  public void close() {
    streaming = false;
    if (stream != null) {
      stream.interrupt();
    }
    creators.shutdownNow();
    kubelet.shutdownNow();
    leaseWatch.close();
    informer.close();
    pods.values().forEach(OperatorProcess::close);
  }
}
