package io.delayedtask.operator.scale;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.DelayedTaskStatus;
import io.delayedtask.operator.api.v1alpha1.Phase;
import io.delayedtask.operator.testing.BuildIdentity;
import io.delayedtask.operator.testing.JobOutcomes;
import io.delayedtask.operator.testing.OperatorProcess;
import io.delayedtask.operator.testing.Ports;
import io.delayedtask.operator.testing.Tasks;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Scale run (not a test), issue 10's measuring command, on each selected API server ({@link
 * ScaleTarget}), in this order:
 *
 * <ol>
 *   <li>the API server's own status-write rate with no operator: N tasks created, then their status
 *       written (PUT, the resourceVersion of the last answer, no reads) by K threads, two rounds;
 *   <li>the operator's requests per task by verb and resource, a status-only task from creation to
 *       Fired and a Job task from creation to Succeeded (the harness plays the Job controller);
 *   <li>the operator's firings per second on the same server: a burst of tasks due at one instant,
 *       the writes one firing needs (from the request counts), and the limit those imply;
 *   <li>what the operator sustains with tasks created at the same rate as they fall due ({@link
 *       MixedLoad#sustainedRate}: a ramp of 15 s steps, up 30% a step, while every task fires and
 *       p99 fire lag and creation-to-scheduled stay under 1 s), then a run at half that rate: fire
 *       lag and creation-to-scheduled, p50 and p99;
 *   <li>the mixed run of issue 10: 500 tasks created at 100 per second, falling due at 50 per
 *       second.
 * </ol>
 *
 * With {@code -Dbaseline.jar=<another build of the operator>} steps 2 to 5 run again with that jar
 * against a fresh API server and Redis, and a table puts the two side by side. Each banner names
 * the jar it measures and the commit that jar was built from ({@code BuildIdentity}); a baseline
 * jar built before the build recorded its commit takes it from {@code -Dbaseline.commit=<hash>}.
 *
 * <pre>
 * mvn -o package -DskipTests
 * mvn -o exec:java -Dexec.classpathScope=test -Dexec.mainClass=io.delayedtask.operator.scale.RequestsAndThroughput \
 *   -Doperator.jar=target/delayed-task-operator.jar [-Dbaseline.jar=/tmp/before.jar -Dbaseline.commit=ec5c48b]
 *   [-Dtarget=mock,real] [-Dwrites.tasks=2000] [-Dwrites.threads=8] [-Dper.tasks=20] [-Dburst=2000] [-DburstLeadSeconds=150]
 *   [-Dmixed.seconds=30]
 * </pre>
 */
public final class RequestsAndThroughput {
  private static final String NS = OperatorScaleLab.NAMESPACE;
  private static final String LIMIT_NS = "limit";

  private RequestsAndThroughput() {}

  public static void main(String[] args) throws Exception {
    for (String target : ScaleTarget.selected()) {
      run(target);
    }
    System.exit(0);
  }

  /** What one operator build did on one server, for the side-by-side table. */
  private record Figures(
      String jar,
      double statusOnlyRequests,
      double jobRequests,
      Burst burst,
      double sustained,
      MixedLoad.Result half,
      MixedLoad.Result mixed500) {}

  private static void run(String targetName) throws Exception {
    Path current = OperatorProcess.jar();
    Figures now;
    double writesPerSecond;
    try (OperatorScaleLab lab = new OperatorScaleLab(ScaleTarget.start(targetName))) {
      OperatorScaleLab.banner("RequestsAndThroughput", lab.target);
      writesPerSecond = statusWriteLimit(lab);
      now = measure(lab, current, writesPerSecond, 0);
    }
    String baseline = System.getProperty("baseline.jar");
    if (baseline == null) {
      return;
    }
    Figures before;
    try (OperatorScaleLab lab = new OperatorScaleLab(ScaleTarget.start(targetName))) {
      // The baseline's own commit (from its jar, or -Dbaseline.commit for a jar built before the
      // build
      // recorded one), not the working tree's: the test classes are the working tree's, the
      // operator is not.
      OperatorScaleLab.banner(
          "RequestsAndThroughput, baseline",
          lab.target,
          "baseline "
              + BuildIdentity.jar(
                  Path.of(baseline), Optional.ofNullable(System.getProperty("baseline.commit")))
              + "; harness from the working tree at "
              + BuildIdentity.workingTree());
      before =
          measure(lab, Path.of(baseline), writesPerSecond, now.half().count() / mixedSeconds());
    }
    System.out.printf(
        "%n----- %s API server: baseline %s against %s -----%n",
        targetName, before.jar(), now.jar());
    row(
        "requests per status-only task, creation to Fired (leases excluded)",
        before.statusOnlyRequests(),
        now.statusOnlyRequests());
    row(
        "requests per Job task, creation to Succeeded (leases excluded)",
        before.jobRequests(),
        now.jobRequests());
    row(
        "burst: firings per second",
        before.burst().firingsPerSecond(),
        now.burst().firingsPerSecond());
    row(
        "burst: requests per firing",
        before.burst().requestsPerFiring(),
        now.burst().requestsPerFiring());
    row("sustained: tasks created and falling due per second", before.sustained(), now.sustained());
    System.out.printf(
        "| mixed at %.0f/s (half of what the current build sustains) | %s | %s |%n",
        now.half().count() / mixedSeconds(), before.half().line(), now.half().line());
    System.out.printf(
        "| 500 created at 100/s, due at 50/s | %s | %s |%n",
        before.mixed500().line(), now.mixed500().line());
  }

  private static void row(String what, double before, double now) {
    System.out.printf("| %s | %.2f | %.2f |%n", what, before, now);
  }

  private static double mixedSeconds() {
    return Integer.getInteger("mixed.seconds", 30);
  }

  /**
   * Steps 2 to 5 with one operator build. {@code halfRate}: the rate of the mixed run, or 0 for
   * half of what this build's burst sustained.
   */
  private static Figures measure(
      OperatorScaleLab lab, Path jar, double writesPerSecond, double halfRate) throws Exception {
    int port = Ports.freePort();
    try (OperatorProcess operator = lab.startOperator("throughput-op", port, jar)) {
      System.out.printf("operator %s ready in %d ms%n", jar, lab.awaitReady(operator, port));
      int perTasks = Integer.getInteger("per.tasks", 20);
      double statusOnly = requestsPerStatusOnlyTask(lab, perTasks);
      double job = requestsPerJobTask(lab, perTasks);
      Burst burst = firingBurst(lab, operator, writesPerSecond);
      double sustained = MixedLoad.sustainedRate(lab, 20, 1.3, Duration.ofSeconds(15));
      System.out.printf(
          "sustained: tasks created and falling due at %.0f per second kept up (every task fired, "
              + "p99 fire lag and creation-to-scheduled under %d ms); the next step did not%n",
          sustained, MixedLoad.KEEPS_UP_MS);
      double rate = halfRate > 0 ? halfRate : Math.max(1, Math.floor(sustained / 2));
      int count = (int) Math.round(rate * mixedSeconds());
      System.out.printf(
          "mixed at half of that: %d tasks created at %.0f per second, falling due at %.0f per second "
              + "from 2 s after the first creation%n",
          count, rate, rate);
      ProcessMeter meter = ProcessMeter.start(lab.processes(operator));
      MixedLoad.Result half = MixedLoad.run(lab, "half", count, rate, rate, Duration.ofSeconds(2));
      meter.print("the mixed run at half the burst rate");
      System.out.println(half.line());
      meter = ProcessMeter.start(lab.processes(operator));
      MixedLoad.Result mixed500 =
          MixedLoad.run(lab, "mixed500", 500, 100, 50, Duration.ofSeconds(1));
      meter.print("the 500-task mixed run");
      System.out.println(mixed500.line());
      System.out.printf(
          "operator heap in use %,d MB; live after a full GC %s%n",
          lab.heapUsedBytes(port) / (1024 * 1024), LiveHeap.megabytes(operator.pid()));
      String built =
          BuildIdentity.builtCommit(jar)
              .map(c -> "commit " + c)
              .or(
                  () ->
                      Optional.ofNullable(System.getProperty("baseline.commit"))
                          .filter(c -> !jar.equals(OperatorProcess.jar()))
                          .map(c -> "commit " + c + " as declared"))
              .orElse("commit unknown");
      return new Figures(
          jar + " (" + built + ")", statusOnly, job, burst, sustained, half, mixed500);
    }
  }

  /**
   * Status PUTs per second with no operator running: the most any status writer can get from this
   * server.
   */
  private static double statusWriteLimit(OperatorScaleLab lab) throws Exception {
    int count = Integer.getInteger("writes.tasks", 2_000);
    int threads = Integer.getInteger("writes.threads", 8);
    KubernetesClient client = lab.client();
    lab.target.createNamespace(LIMIT_NS);
    Instant tomorrow = Instant.now().plus(Duration.ofDays(1));
    DelayedTask[] tasks = new DelayedTask[count];
    ProcessMeter meter = ProcessMeter.start(lab.target.serverProcesses());
    long createMs =
        timed(
            threads,
            count,
            i ->
                tasks[i] =
                    client
                        .resource(Tasks.statusOnly(LIMIT_NS, "w-" + i, tomorrow.plusMillis(i)))
                        .create());
    System.out.printf(
        "no operator: %,d creates by %d threads in %,d ms: %.0f creates per second%n",
        count, threads, createMs, count * 1000.0 / createMs);
    double rate = 0;
    for (int round = 1; round <= 2; round++) {
      int r = round;
      long writeMs =
          timed(
              threads,
              count,
              i -> {
                DelayedTaskStatus status = new DelayedTaskStatus();
                status.setPhase(Phase.Scheduled);
                status.setMessage("write " + r);
                tasks[i].setStatus(status);
                tasks[i] = client.resource(tasks[i]).updateStatus();
              });
      rate = count * 1000.0 / writeMs;
      System.out.printf(
          "no operator: round %d, %,d status PUTs by %d threads in %,d ms: %.0f status writes per second%n",
          round, count, threads, writeMs, rate);
    }
    meter.print("the no-operator writes");
    return rate;
  }

  private interface Indexed {
    void run(int i) throws Exception;
  }

  private static long timed(int threads, int count, Indexed work) throws Exception {
    long start = System.nanoTime();
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<?>> parts = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        int first = t;
        parts.add(
            pool.submit(
                () -> {
                  for (int i = first; i < count; i += threads) {
                    work.run(i);
                  }
                  return null;
                }));
      }
      for (Future<?> part : parts) {
        part.get();
      }
    } finally {
      pool.shutdownNow();
    }
    return (System.nanoTime() - start) / 1_000_000;
  }

  private static double requestsPerStatusOnlyTask(OperatorScaleLab lab, int count)
      throws Exception {
    Instant from = Instant.now();
    Instant due = from.plusSeconds(3);
    for (int i = 0; i < count; i++) {
      lab.client().resource(Tasks.statusOnly(NS, "s-" + i, due)).create();
    }
    awaitPhase(lab, "s-", count, Phase.Fired, null);
    Thread.sleep(
        3_000); // what follows the last status write (the reconciler's turn), and the audit log
    Map<String, Long> requests = lab.target.operatorRequests(from, Instant.now());
    RequestKinds.print("a status-only task, creation to Fired", requests, count);
    return (double) RequestKinds.withoutLeases(requests) / count;
  }

  private static double requestsPerJobTask(OperatorScaleLab lab, int count) throws Exception {
    Instant from = Instant.now();
    Instant due = from.plusSeconds(3);
    for (int i = 0; i < count; i++) {
      lab.client().resource(Tasks.withJob(NS, "j-" + i, due)).create();
    }
    Set<String> completed = new java.util.HashSet<>();
    awaitPhase(
        lab,
        "j-",
        count,
        Phase.Succeeded,
        () -> {
          // The harness plays the Job controller: each new Job succeeds at once.
          for (Job job : lab.client().batch().v1().jobs().inNamespace(NS).list().getItems()) {
            if (completed.add(job.getMetadata().getName())) {
              JobOutcomes.complete(lab.client(), job);
            }
          }
        });
    Thread.sleep(3_000);
    Map<String, Long> requests = lab.target.operatorRequests(from, Instant.now());
    RequestKinds.print("a Job task, creation to Succeeded", requests, count);
    return (double) RequestKinds.withoutLeases(requests) / count;
  }

  private static void awaitPhase(
      OperatorScaleLab lab, String prefix, int count, Phase phase, Runnable meanwhile)
      throws InterruptedException {
    Instant deadline = Instant.now().plusSeconds(120);
    while (Instant.now().isBefore(deadline)) {
      if (meanwhile != null) {
        meanwhile.run();
      }
      long done =
          lab.client().resources(DelayedTask.class).inNamespace(NS).list().getItems().stream()
              .filter(t -> t.getMetadata().getName().startsWith(prefix))
              .filter(t -> t.getStatus() != null && t.getStatus().getPhase() == phase)
              .count();
      if (done == count) {
        return;
      }
      Thread.sleep(200); // a measuring loop, not a test
    }
    throw new IllegalStateException("not all " + prefix + "* tasks reached " + phase + " in 120 s");
  }

  /** What the burst showed. */
  private record Burst(double firingsPerSecond, double requestsPerFiring) {}

  /**
   * Tasks due at one instant: how fast the operator fires them, against the limit measured first.
   */
  private static Burst firingBurst(
      OperatorScaleLab lab, OperatorProcess operator, double writesPerSecond) throws Exception {
    int count = Integer.getInteger("burst", 2_000);
    OperatorFiringScale.Firings fired = new OperatorFiringScale.Firings();
    SharedIndexInformer<DelayedTask> informer =
        lab.client()
            .resources(DelayedTask.class)
            .inNamespace(NS)
            .withLabel("burst", "yes")
            .inform(fired);
    Instant due = Instant.now().plusSeconds(Long.getLong("burstLeadSeconds", 150));
    long createMs =
        lab.createAll(
            count,
            OperatorScaleLab.createThreads(),
            i -> {
              DelayedTask task = Tasks.statusOnly(NS, "b-" + i, due);
              task.getMetadata().setLabels(Map.of("burst", "yes"));
              return task;
            });
    System.out.printf("burst: created %,d tasks due at %s in %,d ms%n", count, due, createMs);
    if (Instant.now().isAfter(due)) {
      System.out.println("WARNING: creating took longer than the lead; raise -DburstLeadSeconds");
    }
    while (Instant.now().isBefore(due)) {
      Thread.sleep(20);
    }
    ProcessMeter meter = ProcessMeter.start(lab.processes(operator));
    Instant deadline = due.plusSeconds(600);
    while (fired.count() < count && Instant.now().isBefore(deadline)) {
      Thread.sleep(50);
    }
    Instant allFired = Instant.now();
    meter.print("the burst");
    informer.close();
    List<Long> lags = new ArrayList<>();
    Instant last = due;
    for (DelayedTaskStatus status : fired.last.values()) {
      Instant firedTime = Instant.parse(status.getFiredTime());
      lags.add(Duration.between(Instant.parse(status.getDueTime()), firedTime).toMillis());
      last = firedTime.isAfter(last) ? firedTime : last;
    }
    lags.sort(null);
    double seconds = Math.max(0.001, Duration.between(due, last).toMillis() / 1000.0);
    double firings = lags.size() / seconds;
    System.out.printf(
        "burst: fired %,d of %,d (more than once: %d, early: %d) in %.2f s: %.0f firings per second; "
            + "lag ms p50 %d, p99 %d, max %d%n",
        lags.size(),
        count,
        fired.firedTwice().size(),
        lags.stream().filter(l -> l < 0).count(),
        seconds,
        firings,
        OperatorScaleLab.percentile(lags, 0.5),
        OperatorScaleLab.percentile(lags, 0.99),
        lags.isEmpty() ? -1 : lags.get(lags.size() - 1));
    Thread.sleep(3_000);
    Map<String, Long> requests = lab.target.operatorRequests(due, allFired.plusSeconds(3));
    RequestKinds.print(
        "the burst, from the due instant until 3 s after the last firing",
        requests,
        Math.max(1, lags.size()));
    double writesPerFiring = (double) RequestKinds.writes(requests) / Math.max(1, lags.size());
    double limit = writesPerSecond / writesPerFiring;
    System.out.printf(
        "limit: %.0f status writes per second with no operator / %.2f writes per firing = %.0f "
            + "firings per second; the operator fired %.0f per second, %.0f%% of the limit%n",
        writesPerSecond, writesPerFiring, limit, firings, 100 * firings / limit);
    return new Burst(
        firings, (double) RequestKinds.withoutLeases(requests) / Math.max(1, lags.size()));
  }
}
