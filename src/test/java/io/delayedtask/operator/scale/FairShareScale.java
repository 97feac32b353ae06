package io.delayedtask.operator.scale;

import static org.awaitility.Awaitility.await;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.DeliverySpec;
import io.delayedtask.operator.api.v1alpha1.Destination;
import io.delayedtask.operator.config.SinkConfig;
import io.delayedtask.operator.task.time.Times;
import io.delayedtask.operator.testing.OperatorProcess;
import io.delayedtask.operator.testing.Ports;
import io.delayedtask.operator.testing.Receiver;
import io.delayedtask.operator.testing.Tasks;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.awaitility.core.ConditionTimeoutException;

/**
 * Scale run (not a test), issue 23's fair sharing: does a tenant whose receivers never answer slow
 * down another tenant's deliveries? One operator process on a real API server of its own, real
 * Redis, receivers on 127.0.0.1 only. In one run, one after the other (timings on a shared machine
 * are noisy: compare within a run):
 *
 * <ol>
 *   <li>(a 5 s warm-up of the ninth namespace's load, not reported)
 *   <li>A, baseline: the namespace {@value OperatorScaleLab#NAMESPACE} (the "ninth") alone, {@code
 *       -Drate} sink tasks per second for {@code -Dseconds}, each due {@link #LEAD} after its
 *       creation, delivering to a receiver that answers 200 at once;
 *   <li>B, the same load while 8 other namespaces each hold {@code -DhangTasks} sink tasks, all
 *       due, delivering to receivers that accept the connection, read the request and never answer
 *       (each task retried {@code -DhangRetry} times, {@code -DhangBackoff} apart, linear, each
 *       attempt timing out after {@code -DhangTimeout}): enough to ask for every slot of the global
 *       cap, all through the measurement.
 * </ol>
 *
 * Lag on the receiver's clock: arrival − {@code ce-time} (the due time), as {@link SinkLagScale}.
 * Prints both p99s, their difference and PASS (≤ 50 ms) or FAIL, and how many connections the
 * hanging receivers held open during B (sampled every 100 ms).
 *
 * <p>The caps ({@code -DmaxInFlight}, default 64, {@code -DperNamespace}, default 8) are set so the
 * 8 hanging namespaces together ask for the whole global cap; the per-host cap is set to twice the
 * global one ({@code -DperHost}) because every receiver here is the same host, 127.0.0.1, where in
 * a cluster 8 tenants' Services are 8 hosts: the host cap must not be what shares the slots.
 *
 * <pre>
 * mvn -o package -DskipTests
 * mvn -o exec:java -Dexec.classpathScope=test -Dexec.mainClass=io.delayedtask.operator.scale.FairShareScale \
 *   -Doperator.jar=target/delayed-task-operator.jar [-Drate=20] [-Dseconds=30] [-DhangTasks=32] \
 *   [-DhangTimeout=10s] [-DhangRetry=100] [-DhangBackoff=100ms] [-DmaxInFlight=64] [-DperNamespace=8] \
 *   [-Ddue=created|planned] [-DpinControlPlane=true]
 * </pre>
 */
public final class FairShareScale {
  private static final String NINTH = OperatorScaleLab.NAMESPACE;
  private static final int HANGING_NAMESPACES = 8;
  private static final Duration LEAD = Duration.ofSeconds(4);

  /** The target: the ninth namespace's p99 moves by at most this much. */
  private static final long TARGET_MS = 50;

  /**
   * {@code -Ddue=created} (the default, as {@link SinkLagScale}): each task due {@link #LEAD} after
   * its creation, so a stalled create (a busy API server) bunches the due times that follow it;
   * {@code -Ddue=planned}: task i due at the run's start + {@link #LEAD} + i/rate whenever it is
   * created, evenly spread in both phases (a task created less than 1 s before its due time is
   * counted and printed).
   */
  private static final boolean PLANNED_DUE = System.getProperty("due", "created").equals("planned");

  /**
   * {@code -DpinControlPlane=true}: kube-apiserver and etcd pinned to the last CPU, the operator,
   * Redis and this harness to the others, as in a cluster whose control plane has nodes of its own
   * (on one 2-core machine, each side gets one core).
   */
  private static final boolean PIN_CONTROL_PLANE = Boolean.getBoolean("pinControlPlane");

  private FairShareScale() {}

  public static void main(String[] args) throws Exception {
    int rate = Integer.getInteger("rate", 20);
    int seconds = Integer.getInteger("seconds", 30);
    int hangTasks = Integer.getInteger("hangTasks", 32);
    String hangTimeout = System.getProperty("hangTimeout", "10s");
    int hangRetry = Integer.getInteger("hangRetry", 100);
    String hangBackoff = System.getProperty("hangBackoff", "100ms");
    int maxInFlight = Integer.getInteger("maxInFlight", 64);
    int perNamespace = Integer.getInteger("perNamespace", 8);
    int perHost = Integer.getInteger("perHost", 2 * maxInFlight);

    List<String> hangingNamespaces =
        IntStream.rangeClosed(1, HANGING_NAMESPACES).mapToObj(i -> "hang-" + i).toList();
    List<Holder> holders = new ArrayList<>();
    try (OperatorScaleLab lab = new OperatorScaleLab(ScaleTarget.start("real"), hangingNamespaces);
        Receiver fast = Receiver.start()) {
      for (int i = 0; i < HANGING_NAMESPACES; i++) {
        holders.add(Holder.start());
      }
      OperatorScaleLab.banner(
          "FairShareScale, the ninth namespace "
              + rate
              + "/s for "
              + seconds
              + " s, alone, then beside "
              + HANGING_NAMESPACES
              + " namespaces x "
              + hangTasks
              + " tasks whose receivers never answer (timeout "
              + hangTimeout
              + ", retry "
              + hangRetry
              + ", backoff "
              + hangBackoff
              + " linear); caps: "
              + SinkConfig.MAX_IN_FLIGHT
              + "="
              + maxInFlight
              + ", "
              + SinkConfig.MAX_IN_FLIGHT_PER_NAMESPACE
              + "="
              + perNamespace
              + ", "
              + SinkConfig.MAX_IN_FLIGHT_PER_HOST
              + "="
              + perHost
              + "; due times "
              + (PLANNED_DUE ? "planned, evenly spread" : "creation + " + LEAD.toSeconds() + " s"),
          lab.target);
      String allowed =
          fast.base() + "," + holders.stream().map(Holder::base).collect(Collectors.joining(","));
      int port = Ports.freePort();
      try (OperatorProcess operator =
          lab.startOperator(
              "fair-op",
              port,
              OperatorProcess.jar(),
              Map.of(
                  SinkConfig.ALLOWED_URIS, allowed,
                  SinkConfig.MAX_IN_FLIGHT, Integer.toString(maxInFlight),
                  SinkConfig.MAX_IN_FLIGHT_PER_NAMESPACE, Integer.toString(perNamespace),
                  SinkConfig.MAX_IN_FLIGHT_PER_HOST, Integer.toString(perHost)))) {
        System.out.printf("operator ready in %d ms%n", lab.awaitReady(operator, port));
        if (PIN_CONTROL_PLANE) {
          int cpus = Runtime.getRuntime().availableProcessors();
          Map<String, ProcessHandle> workload =
              new java.util.LinkedHashMap<>(lab.processes(operator));
          lab.target.serverProcesses().keySet().forEach(workload::remove);
          workload.put("this harness (receivers, creates)", ProcessHandle.current());
          System.out.println(
              "control plane on its own CPU (-DpinControlPlane), as on control-plane nodes:");
          CpuPinning.pin(lab.target.serverProcesses(), Integer.toString(cpus - 1));
          CpuPinning.pin(workload, cpus == 2 ? "0" : "0-" + (cpus - 2));
        }

        // Warm-up, not reported: a fresh JVM's first deliveries load and compile the HTTP client.
        steady(lab, fast, "warmup", rate, 5);

        ProcessMeter meterA = ProcessMeter.start(lab.processes(operator));
        Histograms beforeA = Histograms.of(lab.metrics(port));
        System.out.printf("A starts: %s%n", ProcessMeter.loadAverage());
        Instant startA = Instant.now();
        steady(lab, fast, "a", rate, seconds);
        Instant endA = Instant.now();
        meterA.print("A");
        List<Long> baseline = lags(fast.requestsTo("/a"));
        report("A. the ninth namespace alone: delivery lag (receiver clock)", baseline);
        Histograms.of(lab.metrics(port)).printSince(beforeA, "A");
        printRequests(lab, "A", startA, endA);

        // B: every hanging namespace's tasks due at once, a little ahead so they are all created
        // first.
        Instant hangDue = Instant.now().plus(Duration.ofSeconds(3));
        for (int n = 0; n < HANGING_NAMESPACES; n++) {
          String namespace = hangingNamespaces.get(n);
          String uri = holders.get(n).base() + "/hang";
          lab.createAll(
              hangTasks,
              OperatorScaleLab.createThreads(),
              i ->
                  hangingTask(
                      namespace, "hang-" + i, hangDue, uri, hangTimeout, hangRetry, hangBackoff));
        }
        System.out.printf(
            "created %d x %d hanging tasks, due %s%n", HANGING_NAMESPACES, hangTasks, hangDue);
        int wanted = Math.min(HANGING_NAMESPACES * perNamespace, maxInFlight);
        int held = awaitHeld(holders, wanted, Duration.ofSeconds(30));
        System.out.printf(
            "the hanging receivers hold %d connections open (%d x %d = %d asked for; global cap %d)%n",
            held, HANGING_NAMESPACES, perNamespace, HANGING_NAMESPACES * perNamespace, maxInFlight);

        Sampler sampler = Sampler.start(holders, () -> retries(lab, port));
        ProcessMeter meterB = ProcessMeter.start(lab.processes(operator));
        Histograms beforeB = Histograms.of(lab.metrics(port));
        System.out.printf("B starts: %s%n", ProcessMeter.loadAverage());
        Instant startB = Instant.now();
        steady(lab, fast, "b", rate, seconds);
        Instant endB = Instant.now();
        meterB.print("B");
        sampler.stop();
        List<Long> loaded = lags(fast.requestsTo("/b"));
        report(
            "B. the ninth namespace beside 8 hanging ones: delivery lag (receiver clock)", loaded);
        Histograms.of(lab.metrics(port)).printSince(beforeB, "B");
        timeline(fast.requestsTo("/b"), sampler);
        printRequests(lab, "B", startB, endB);
        System.out.printf(
            "   connections held open by the hanging receivers during B (every 100 ms, n=%d): min %d, "
                + "mean %.1f, max %d; per namespace now %s; accepted in all %d%n",
            sampler.samples.get(),
            sampler.min.get(),
            sampler.sum.get() / (double) Math.max(1, sampler.samples.get()),
            sampler.max.get(),
            holders.stream()
                .map(h -> Integer.toString(h.open.get()))
                .collect(Collectors.joining(" ")),
            holders.stream().mapToLong(h -> h.accepted.get()).sum());

        long p99a = OperatorScaleLab.percentile(baseline, 0.99);
        long p99b = OperatorScaleLab.percentile(loaded, 0.99);
        System.out.printf(
            "%nRESULT: the ninth namespace's p99 %d ms alone, %d ms beside 8 namespaces whose receivers "
                + "never answer: moved by %+d ms (target at most %d ms): %s%n",
            p99a, p99b, p99b - p99a, TARGET_MS, p99b - p99a <= TARGET_MS ? "PASS" : "FAIL");
        System.out.println("operator's delivery counters at the end:");
        lab.metrics(port)
            .lines()
            .filter(line -> line.startsWith("delayedtask_deliveries_total"))
            .forEach(line -> System.out.println("   " + line));
      }
    } finally {
      holders.forEach(Holder::close);
    }
    System.exit(0);
  }

  /**
   * Creates {@code rate} sink tasks a second in the ninth namespace for {@code seconds}; waits for
   * all.
   */
  private static void steady(OperatorScaleLab lab, Receiver fast, String run, int rate, int seconds)
      throws Exception {
    long start = System.nanoTime();
    Instant startInstant = Instant.now();
    int count = rate * seconds;
    int late = 0;
    for (int i = 0; i < count; i++) {
      long at = start + i * 1_000_000_000L / rate;
      long wait = at - System.nanoTime();
      if (wait > 0) {
        // Pacing the load (one task every 1/rate s), not waiting for a result.
        Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
      }
      Instant due =
          PLANNED_DUE
              ? startInstant.plus(LEAD).plusNanos(i * 1_000_000_000L / rate)
              : Instant.now().plus(LEAD);
      if (Duration.between(Instant.now(), due).compareTo(Duration.ofSeconds(1)) < 0) {
        late++;
      }
      String uri = fast.base() + "/" + run;
      lab.client()
          .resource(
              Tasks.task(
                  NINTH,
                  run + "-" + i,
                  s -> {
                    s.setRunAt(Tasks.rfc3339(due));
                    Destination sink = new Destination();
                    sink.setUri(uri);
                    s.setSink(sink);
                  }))
          .create();
    }
    if (late > 0) {
      System.out.printf(
          "   NOTE: %d of %d %s tasks were created less than 1 s before their due time%n",
          late, count, run);
    }
    awaitFinished(lab, run + "-", count, Duration.ofMinutes(2));
  }

  /**
   * The operator's requests to the API server in [from, to] (audit log, Leases aside), per second.
   */
  private static void printRequests(OperatorScaleLab lab, String phase, Instant from, Instant to) {
    Map<String, Long> requests = new java.util.TreeMap<>(lab.target.operatorRequests(from, to));
    requests.keySet().removeIf(key -> key.contains("leases"));
    double wall = Duration.between(from, to).toMillis() / 1000.0;
    System.out.printf(
        "   the operator's API requests during %s (%.1f s, audit log, Leases aside): %s%n",
        phase,
        wall,
        requests.entrySet().stream()
            .map(
                e ->
                    String.format("%s %,d (%.1f/s)", e.getKey(), e.getValue(), e.getValue() / wall))
            .collect(Collectors.joining("; ")));
  }

  /**
   * delayedtask_deliveries_total{outcome="retry"} now: failed attempts to be retried, all the
   * hanging tasks'.
   */
  private static long retries(OperatorScaleLab lab, int port) {
    try {
      return lab.metrics(port)
          .lines()
          .filter(l -> l.startsWith("delayedtask_deliveries_total{outcome=\"retry\"}"))
          .mapToLong(l -> (long) Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1)))
          .sum();
    } catch (IOException e) {
      return -1;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return -1;
    }
  }

  /**
   * B second by second: the ninth namespace's deliveries due in that second (count, max lag), the
   * connections the hanging receivers held (min), and the hanging tasks' failed attempts recorded
   * (the operator's retry counter's increase): whether the lag follows the slots or the retries.
   */
  private static void timeline(List<Receiver.Request> requests, Sampler sampler) {
    Map<Long, List<Long>> bySecond = new java.util.TreeMap<>();
    for (Receiver.Request r : requests) {
      Instant due = Objects.requireNonNull(Times.parseOrNull(r.header("ce-time")));
      bySecond
          .computeIfAbsent(due.getEpochSecond(), k -> new ArrayList<>())
          .add(Duration.between(due, r.at()).toMillis());
    }
    System.out.println(
        "   B second by second (by due time): ninth's deliveries, their max lag; hanging connections held "
            + "(min of 10 samples); hanging attempts failed (retry counter's increase)");
    for (long second :
        new java.util.TreeSet<>(
            java.util.stream.Stream.concat(
                    bySecond.keySet().stream(), sampler.heldBySecond.keySet().stream())
                .toList())) {
      List<Long> lags = bySecond.getOrDefault(second, List.of());
      Long retries = sampler.retriesBySecond.get(second);
      Long before = sampler.retriesBySecond.get(second - 1);
      System.out.printf(
          "     %s  n=%2d max %4s ms   held %3s   failed attempts %s%n",
          Instant.ofEpochSecond(second).toString().substring(11, 19),
          lags.size(),
          lags.isEmpty() ? "-" : Long.toString(java.util.Collections.max(lags)),
          sampler.heldBySecond.containsKey(second)
              ? Integer.toString(sampler.heldBySecond.get(second))
              : "-",
          retries == null || before == null ? "-" : Long.toString(retries - before));
    }
  }

  private static DelayedTask hangingTask(
      String namespace,
      String name,
      Instant due,
      String uri,
      String timeout,
      int retry,
      String backoff) {
    return Tasks.task(
        namespace,
        name,
        s -> {
          s.setRunAt(Tasks.rfc3339(due));
          Destination sink = new Destination();
          sink.setUri(uri);
          s.setSink(sink);
          DeliverySpec delivery = new DeliverySpec();
          delivery.setTimeout(timeout);
          delivery.setRetry(retry);
          delivery.setBackoffDelay(backoff);
          delivery.setBackoffPolicy("linear");
          s.setDelivery(delivery);
        });
  }

  /**
   * Waits until every ninth-namespace task named {@code prefix*} is finished; a warning after
   * {@code limit}.
   */
  private static void awaitFinished(
      OperatorScaleLab lab, String prefix, int count, Duration limit) {
    try {
      await()
          .atMost(limit)
          .pollInterval(Duration.ofMillis(500))
          .until(
              () ->
                  lab
                          .client()
                          .resources(DelayedTask.class)
                          .inNamespace(NINTH)
                          .list()
                          .getItems()
                          .stream()
                          .filter(t -> t.getMetadata().getName().startsWith(prefix))
                          .filter(
                              t ->
                                  t.getStatus() != null
                                      && t.getStatus().getPhase() != null
                                      && t.getStatus().getPhase().isFinished())
                          .count()
                      >= count);
    } catch (ConditionTimeoutException e) {
      System.out.println("WARNING: not every " + prefix + "* task finished within " + limit);
    }
  }

  /**
   * Waits until the hanging receivers hold {@code wanted} connections, or their number has not
   * grown for 5 s (as many as the operator opens), or {@code limit}; returns how many they hold.
   */
  private static int awaitHeld(List<Holder> holders, int wanted, Duration limit) {
    AtomicInteger best = new AtomicInteger();
    AtomicLong grewAt = new AtomicLong(System.nanoTime());
    try {
      await()
          .atMost(limit)
          .pollInterval(Duration.ofMillis(100))
          .until(
              () -> {
                int held = held(holders);
                if (held > best.get()) {
                  best.set(held);
                  grewAt.set(System.nanoTime());
                }
                return held >= wanted
                    || held > 0 && System.nanoTime() - grewAt.get() > 5_000_000_000L;
              });
    } catch (ConditionTimeoutException e) {
      System.out.println(
          "WARNING: the hanging receivers held " + held(holders) + " after " + limit);
    }
    return held(holders);
  }

  private static int held(List<Holder> holders) {
    return holders.stream().mapToInt(h -> h.open.get()).sum();
  }

  private static List<Long> lags(List<Receiver.Request> requests) {
    return requests.stream()
        .map(
            r ->
                Duration.between(
                        Objects.requireNonNull(Times.parseOrNull(r.header("ce-time"))), r.at())
                    .toMillis())
        .sorted()
        .toList();
  }

  private static void report(String what, List<Long> sorted) {
    System.out.printf(
        "%s: n=%,d p50 %d ms, p99 %d ms, max %d ms, early %d%n",
        what,
        sorted.size(),
        OperatorScaleLab.percentile(sorted, 0.50),
        OperatorScaleLab.percentile(sorted, 0.99),
        sorted.isEmpty() ? -1 : sorted.get(sorted.size() - 1),
        sorted.stream().filter(l -> l < 0).count());
  }

  /**
   * A receiver that never answers: a plain socket server on 127.0.0.1 that accepts every
   * connection, reads whatever is sent and discards it, and answers nothing until the sender gives
   * up and closes.
   */
  private static final class Holder implements AutoCloseable {
    final ServerSocket server;
    final AtomicInteger open = new AtomicInteger();
    final AtomicLong accepted = new AtomicLong();
    final Set<Socket> sockets = ConcurrentHashMap.newKeySet();

    private Holder(ServerSocket server) {
      this.server = server;
    }

    static Holder start() throws IOException {
      Holder holder = new Holder(new ServerSocket(0, 512, InetAddress.getLoopbackAddress()));
      daemon("holder-accept", holder::accept).start();
      return holder;
    }

    String base() {
      return "http://127.0.0.1:" + server.getLocalPort();
    }

    private void accept() {
      while (!server.isClosed()) {
        Socket socket;
        try {
          socket = server.accept();
        } catch (IOException closed) {
          return;
        }
        accepted.incrementAndGet();
        open.incrementAndGet();
        sockets.add(socket);
        daemon(
                "holder-read",
                () -> {
                  byte[] discard = new byte[8192];
                  try (socket;
                      InputStream in = socket.getInputStream()) {
                    while (in.read(discard) >= 0) {
                      // read and hold: never an answer
                    }
                  } catch (IOException gone) {
                    // the sender closed it: its timeout
                  } finally {
                    sockets.remove(socket);
                    open.decrementAndGet();
                  }
                })
            .start();
      }
    }

    private static Thread daemon(String name, Runnable body) {
      Thread thread = new Thread(body, name);
      thread.setDaemon(true);
      return thread;
    }

    @Override
    public void close() {
      try {
        server.close();
      } catch (IOException ignored) {
        // closing anyway
      }
      sockets.forEach(
          socket -> {
            try {
              socket.close();
            } catch (IOException ignored) {
              // closing anyway
            }
          });
    }
  }

  /**
   * Samples the connections the hanging receivers hold, every 100 ms, and the operator's retry
   * counter once a second (by the second it was read in), until stopped.
   */
  private static final class Sampler {
    final AtomicLong samples = new AtomicLong();
    final AtomicLong sum = new AtomicLong();
    final AtomicInteger min = new AtomicInteger(Integer.MAX_VALUE);
    final AtomicInteger max = new AtomicInteger();
    final Map<Long, Integer> heldBySecond = new ConcurrentHashMap<>();
    final Map<Long, Long> retriesBySecond = new ConcurrentHashMap<>();
    private final Thread thread;

    private Sampler(List<Holder> holders, java.util.function.LongSupplier retries) {
      thread =
          new Thread(
              () -> {
                while (!Thread.currentThread().isInterrupted()) {
                  int held = holders.stream().mapToInt(h -> h.open.get()).sum();
                  long second = Instant.now().getEpochSecond();
                  heldBySecond.merge(second, held, Math::min);
                  if (!retriesBySecond.containsKey(second)) {
                    retriesBySecond.put(second, retries.getAsLong());
                  }
                  samples.incrementAndGet();
                  sum.addAndGet(held);
                  min.accumulateAndGet(held, Math::min);
                  max.accumulateAndGet(held, Math::max);
                  try {
                    Thread.sleep(100); // pacing the samples, not waiting for a result
                  } catch (InterruptedException e) {
                    return;
                  }
                }
              },
              "held-sampler");
      thread.setDaemon(true);
    }

    static Sampler start(List<Holder> holders, java.util.function.LongSupplier retries) {
      Sampler sampler = new Sampler(holders, retries);
      sampler.thread.start();
      return sampler;
    }

    void stop() throws InterruptedException {
      thread.interrupt();
      thread.join();
    }
  }

  /**
   * Where the lag goes, from the operator's own /metrics over one phase: the fire lag (due time to
   * the poller's claim, first attempts only: in both phases the ninth namespace's alone, the
   * hanging tasks' first attempts came before) and the duration of delivered requests (from the
   * sender's {@code send}, so the wait for a delivery slot included, to the answer; only the ninth
   * namespace's are answered). Quantiles are bucket upper bounds of the phase's increase.
   */
  private record Histograms(
      Map<String, java.util.TreeMap<Double, Double>> buckets, Map<String, double[]> countSum) {
    private static final Map<String, String> SERIES =
        Map.of(
            "fire lag (due -> claim)",
            "delayedtask_fire_lag_seconds",
            "delivered request (send -> answer, slot wait included)",
            "delayedtask_delivery_duration_seconds{outcome=\"delivered\"");
    private static final java.util.regex.Pattern LE =
        java.util.regex.Pattern.compile("le=\"([^\"]+)\"");

    static Histograms of(String metrics) {
      Map<String, java.util.TreeMap<Double, Double>> buckets = new java.util.TreeMap<>();
      Map<String, double[]> countSum = new java.util.TreeMap<>();
      SERIES.forEach(
          (label, series) -> {
            String name = series.contains("{") ? series.substring(0, series.indexOf('{')) : series;
            String labels = series.contains("{") ? series.substring(series.indexOf('{') + 1) : "";
            java.util.TreeMap<Double, Double> byLe = new java.util.TreeMap<>();
            double[] cs = new double[2];
            for (String line : metrics.lines().toList()) {
              if (line.startsWith("#") || !line.contains(labels)) {
                continue;
              }
              double value = Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
              if (line.startsWith(name + "_bucket")) {
                java.util.regex.Matcher le = LE.matcher(line);
                if (le.find()) {
                  byLe.put(
                      le.group(1).equals("+Inf")
                          ? Double.POSITIVE_INFINITY
                          : Double.parseDouble(le.group(1)),
                      value);
                }
              } else if (line.startsWith(name + "_count")) {
                cs[0] = value;
              } else if (line.startsWith(name + "_sum")) {
                cs[1] = value;
              }
            }
            buckets.put(label, byLe);
            countSum.put(label, cs);
          });
      return new Histograms(buckets, countSum);
    }

    void printSince(Histograms before, String phase) {
      buckets.forEach(
          (label, now) -> {
            double count = countSum.get(label)[0] - before.countSum.get(label)[0];
            double sum = countSum.get(label)[1] - before.countSum.get(label)[1];
            java.util.TreeMap<Double, Double> then = before.buckets.get(label);
            System.out.printf(
                "   %s, operator's histogram over %s: n=%.0f, mean %.1f ms, p50 <= %s, p99 <= %s%n",
                label,
                phase,
                count,
                count == 0 ? 0 : 1000 * sum / count,
                quantile(now, then, count, 0.50),
                quantile(now, then, count, 0.99));
          });
    }

    private static String quantile(
        java.util.TreeMap<Double, Double> now,
        java.util.TreeMap<Double, Double> then,
        double count,
        double q) {
      for (Map.Entry<Double, Double> bucket : now.entrySet()) {
        double increase = bucket.getValue() - then.getOrDefault(bucket.getKey(), 0.0);
        if (count > 0 && increase >= q * count) {
          return bucket.getKey().isInfinite()
              ? "+Inf"
              : String.format("%.0f ms", bucket.getKey() * 1000);
        }
      }
      return "-";
    }
  }
}
