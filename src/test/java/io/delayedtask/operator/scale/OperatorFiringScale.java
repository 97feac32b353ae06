package io.delayedtask.operator.scale;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.DelayedTaskStatus;
import io.delayedtask.operator.testing.FiredTimes;
import io.delayedtask.operator.testing.OperatorProcess;
import io.delayedtask.operator.testing.Ports;
import io.delayedtask.operator.testing.Tasks;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Scale run (not a test): 5,000 DelayedTasks (status only) due within 5 s, through one operator
 * process, on each selected API server ({@link ScaleTarget}); prints whether each fired once and
 * none early, the lag firedTime - dueTime, firings per second, the operator's API requests per
 * fired task by verb and resource, its heap (in use and live), and the CPU and memory of the API
 * server (and etcd), the operator and Redis.
 *
 * <pre>
 * mvn -o package -DskipTests
 * mvn -o exec:java -Dexec.classpathScope=test -Dexec.mainClass=io.delayedtask.operator.scale.OperatorFiringScale \
 *   -Doperator.jar=target/delayed-task-operator.jar [-Dtarget=mock,real] [-Dtasks=5000] [-DleadSeconds=120]
 * </pre>
 */
public final class OperatorFiringScale {
  private static final String NS = OperatorScaleLab.NAMESPACE;

  private OperatorFiringScale() {}

  public static void main(String[] args) throws Exception {
    for (String target : ScaleTarget.selected()) {
      run(target);
    }
    System.exit(0);
  }

  private static void run(String targetName) throws Exception {
    int count = Integer.getInteger("tasks", 5_000);
    try (OperatorScaleLab lab = new OperatorScaleLab(ScaleTarget.start(targetName))) {
      OperatorScaleLab.banner(
          "OperatorFiringScale, " + count + " tasks due within 5 s", lab.target);
      int port = Ports.freePort();
      try (OperatorProcess operator = lab.startOperator("scale-op", port)) {
        System.out.printf("operator ready in %d ms%n", lab.awaitReady(operator, port));
        ProcessMeter whole = ProcessMeter.start(lab.processes(operator));
        Firings fired = new Firings();
        SharedIndexInformer<DelayedTask> informer =
            lab.client().resources(DelayedTask.class).inNamespace(NS).inform(fired);
        // Created first, due later: the due window starts once every task exists.
        Instant due = Instant.now().plus(Duration.ofSeconds(Long.getLong("leadSeconds", 120)));
        long createMs =
            lab.createAll(
                count,
                OperatorScaleLab.createThreads(),
                i -> Tasks.statusOnly(NS, "t-" + i, due.plusMillis(i * 5_000L / count)));
        System.out.printf(
            "created %,d tasks in %,d ms (%d threads, operator reconciling meanwhile: %.0f per second); "
                + "first due %s%n",
            count, createMs, OperatorScaleLab.createThreads(), count * 1000.0 / createMs, due);
        if (Instant.now().isAfter(due)) {
          System.out.println("WARNING: creating took longer than the lead; raise -DleadSeconds");
        }
        while (Instant.now().isBefore(due)) {
          Thread.sleep(20); // a measuring loop, not a test
        }
        ProcessMeter window = ProcessMeter.start(lab.processes(operator));
        Instant deadline = due.plusSeconds(600);
        while (fired.count() < count && Instant.now().isBefore(deadline)) {
          Thread.sleep(50);
        }
        Instant allFired = Instant.now();
        window.print("the due window until all fired");
        informer.close();

        List<Long> lags = new ArrayList<>();
        Instant lastFired = Instant.EPOCH;
        Map<Long, Integer> perSecond = new TreeMap<>();
        long early = 0;
        for (DelayedTaskStatus status : fired.last.values()) {
          Instant firedTime = Instant.parse(status.getFiredTime());
          long lag = Duration.between(Instant.parse(status.getDueTime()), firedTime).toMillis();
          lags.add(lag);
          early += lag < 0 ? 1 : 0;
          lastFired = firedTime.isAfter(lastFired) ? firedTime : lastFired;
          perSecond.merge(firedTime.getEpochSecond(), 1, Integer::sum);
        }
        lags.sort(null);
        double spanSeconds = Duration.between(due, lastFired).toMillis() / 1000.0;
        System.out.printf(
            "fired %,d of %,d; fired more than once: %d; fired early: %d%n",
            lags.size(), count, fired.firedTwice().size(), early);
        System.out.printf(
            "lag ms p50 %d, p99 %d, max %d, min %d; last firing %s, %.1f s after the first due time "
                + "(the window is 5 s): %.0f firings per second overall, %d in the busiest second%n",
            OperatorScaleLab.percentile(lags, 0.50),
            OperatorScaleLab.percentile(lags, 0.99),
            lags.isEmpty() ? -1 : lags.get(lags.size() - 1),
            lags.isEmpty() ? -1 : lags.get(0),
            lastFired,
            spanSeconds,
            lags.size() / Math.max(spanSeconds, 0.001),
            perSecond.values().stream().mapToInt(Integer::intValue).max().orElse(0));
        Thread.sleep(
            3_000); // the reconciler's requests that follow the last status write, and the audit
        // log
        RequestKinds.print(
            "API requests from the first due time until 3 s after the last firing, per fired task",
            lab.target.operatorRequests(due, allFired.plusSeconds(3)),
            Math.max(1, lags.size()));
        System.out.printf(
            "operator heap in use %,d MB; live after a full GC %s (-Xmx1g)%n",
            lab.heapUsedBytes(port) / (1024 * 1024), LiveHeap.megabytes(operator.pid()));
        whole.print("the whole run (creating and firing)");
      }
    }
  }

  /**
   * Each task's last status with a firedTime, and the tasks that fired more than once ({@link
   * FiredTimes}' rule).
   */
  static final class Firings extends TaskVersions {
    final Map<String, DelayedTaskStatus> last = new ConcurrentHashMap<>();
    final FiredTimes firedTimes = new FiredTimes();

    int count() {
      return last.size();
    }

    Set<String> firedTwice() {
      return firedTimes.firedMoreThanOnce();
    }

    @Override
    void record(DelayedTask task) {
      firedTimes.record(task);
      DelayedTaskStatus status = task.getStatus();
      if (status != null && status.getFiredTime() != null) {
        last.put(task.getMetadata().getName(), status);
      }
    }
  }
}
