package io.delayedtask.operator.scale;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.Phase;
import io.delayedtask.operator.testing.OperatorProcess;
import io.delayedtask.operator.testing.Ports;
import io.delayedtask.operator.testing.Tasks;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.time.Duration;
import java.time.Instant;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Scale run (not a test): 50,000 pending DelayedTasks (due in a day), on each selected API server
 * ({@link ScaleTarget}). Prints the time to create them, the time from process start to ready and
 * to a full schedule in Redis (rebuilt from the tasks), the operator's heap in use and its live set
 * after a full GC, its API requests per task during the rebuild, the CPU and memory of the API
 * server (and etcd), and, after a SIGKILL and a restart, the time to the first fire of a task that
 * fell due meanwhile.
 *
 * <pre>
 * mvn -o package -DskipTests
 * MAVEN_OPTS=-Xmx3g mvn -o exec:java -Dexec.classpathScope=test \
 *   -Dexec.mainClass=io.delayedtask.operator.scale.PendingTasksScale \
 *   -Doperator.jar=target/delayed-task-operator.jar [-Dtarget=mock,real] [-Dtasks=50000]
 * </pre>
 */
public final class PendingTasksScale {
  private static final String NS = OperatorScaleLab.NAMESPACE;

  private PendingTasksScale() {}

  public static void main(String[] args) throws Exception {
    for (String target : ScaleTarget.selected()) {
      run(target);
    }
    System.exit(0);
  }

  private static void run(String targetName) throws Exception {
    int count = Integer.getInteger("tasks", 50_000);
    try (OperatorScaleLab lab = new OperatorScaleLab(ScaleTarget.start(targetName))) {
      OperatorScaleLab.banner("PendingTasksScale, " + count + " pending tasks", lab.target);
      ProcessMeter whole = ProcessMeter.start(lab.target.serverProcesses());
      ProcessMeter creating = ProcessMeter.start(lab.target.serverProcesses());
      // Started before the tasks exist, so it follows them by watch events instead of one LIST of
      // all of them.
      Reconciled reconciled = new Reconciled();
      SharedIndexInformer<DelayedTask> informer =
          lab.client().resources(DelayedTask.class).inNamespace(NS).inform(reconciled);
      Instant tomorrow = Instant.now().plus(Duration.ofDays(1));
      long createMs =
          lab.createAll(
              count,
              OperatorScaleLab.createThreads(),
              i -> Tasks.statusOnly(NS, "p-" + i, tomorrow.plusMillis(i)));
      System.out.printf(
          "created %,d pending tasks in %,d ms (%d threads, no operator running: %.0f per second)%n",
          count, createMs, OperatorScaleLab.createThreads(), count * 1000.0 / createMs);
      creating.print("creating the tasks");

      RedisClient redis = RedisClient.create(lab.redis.uri());
      try (StatefulRedisConnection<String, String> connection = redis.connect()) {
        String dueKey = new io.delayedtask.operator.schedule.ScheduleKeys("delayedtask", 1).due(0);
        int port = Ports.freePort();
        Instant startedAt = Instant.now();
        OperatorProcess first = lab.startOperator("pending-op-1", port);
        ProcessMeter rebuilding = ProcessMeter.start(lab.processes(first));
        long start = System.nanoTime();
        long readyMs = -1;
        long fullMs = -1;
        long reconciledMs = -1;
        long limitMs = Long.getLong("rebuildLimitSeconds", 600) * 1000;
        // Every task's first reconcile can take far longer than the schedule (one resync fills it):
        // bounded.
        long reconcileWaitMs = Long.getLong("reconcileWaitSeconds", 600) * 1000;
        while (readyMs < 0 || fullMs < 0 || reconciledMs < 0) {
          long elapsed = (System.nanoTime() - start) / 1_000_000;
          if (readyMs < 0 && lab.ready(port)) {
            readyMs = elapsed;
          }
          if (fullMs < 0 && connection.sync().zcard(dueKey) >= count) {
            fullMs = elapsed;
          }
          if (reconciledMs < 0 && reconciled.scheduled.size() >= count) {
            reconciledMs = elapsed;
          }
          boolean waitedForReconciles =
              readyMs >= 0 && fullMs >= 0 && elapsed - fullMs > reconcileWaitMs;
          if (elapsed > limitMs || waitedForReconciles || !first.isAlive()) {
            System.out.printf(
                "WARNING: after %,d ms: schedule %,d, reconciled %,d of %,d; going on%n",
                elapsed, connection.sync().zcard(dueKey), reconciled.scheduled.size(), count);
            break;
          }
          Thread.sleep(200); // a measuring loop, not a test
        }
        Instant fullAt = Instant.now();
        informer.close();
        rebuilding.print("the first start until the schedule was full and every task reconciled");
        System.out.printf(
            "first start: ready after %,d ms, schedule holds all %,d after %,d ms, every task's status "
                + "Scheduled after %,d ms%n",
            readyMs, count, fullMs, reconciledMs);
        System.out.printf(
            "first start: heap in use %,d MB; live after a full GC %s (-Xmx1g)%n",
            lab.heapUsedBytes(port) / (1024 * 1024), LiveHeap.megabytes(first.pid()));
        Thread.sleep(3_000); // trailing status writes and the audit log
        RequestKinds.print(
            "API requests from the first start until 3 s after every task was reconciled, per task",
            lab.target.operatorRequests(startedAt, fullAt.plusSeconds(3)),
            count);

        first.kill();
        Instant canaryDue = Instant.now().plusSeconds(2);
        lab.client().resource(Tasks.statusOnly(NS, "canary", canaryDue)).create();
        while (Instant.now().isBefore(canaryDue)) {
          Thread.sleep(50);
        }
        int port2 = Ports.freePort();
        long restart = System.nanoTime();
        Instant restartedAt = Instant.now();
        try (OperatorProcess second = lab.startOperator("pending-op-2", port2)) {
          while (true) {
            DelayedTask canary =
                lab.client().resources(DelayedTask.class).inNamespace(NS).withName("canary").get();
            if (canary.getStatus() != null && canary.getStatus().getFiredTime() != null) {
              System.out.printf(
                  "after SIGKILL and restart: the overdue canary fired %,d ms after the new process "
                      + "started (firedTime %s, restarted %s)%n",
                  (System.nanoTime() - restart) / 1_000_000,
                  canary.getStatus().getFiredTime(),
                  restartedAt);
              break;
            }
            if (!second.isAlive() || System.nanoTime() - restart > 600_000_000_000L) {
              throw new IllegalStateException("the canary did not fire; log:\n" + second.log());
            }
            Thread.sleep(100);
          }
          System.out.printf(
              "restarted operator: heap in use %,d MB; live after a full GC %s%n",
              lab.heapUsedBytes(port2) / (1024 * 1024), LiveHeap.megabytes(second.pid()));
        }
      } finally {
        redis.shutdown();
      }
      whole.print("the whole run (API server and etcd)");
    }
  }

  /** The tasks whose status says Scheduled (the operator has reconciled them once). */
  static final class Reconciled extends TaskVersions {
    final Set<String> scheduled = ConcurrentHashMap.newKeySet();

    @Override
    void record(DelayedTask task) {
      if (task.getStatus() != null && task.getStatus().getPhase() == Phase.Scheduled) {
        scheduled.add(task.getMetadata().getName());
      }
    }
  }
}
