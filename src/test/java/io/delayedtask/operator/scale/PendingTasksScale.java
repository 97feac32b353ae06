package io.delayedtask.operator.scale;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.testing.OperatorProcess;
import io.delayedtask.operator.testing.Tasks;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.time.Duration;
import java.time.Instant;

/**
 * Scale run (not a test): 50,000 pending DelayedTasks (due in a day). Prints the operator's heap,
 * the time from process start to ready and to a full schedule in Redis (rebuilt from the tasks),
 * and, after a SIGKILL and a restart, the time to the first fire of a task that fell due meanwhile.
 *
 * <pre>
 * mvn -o package -DskipTests
 * MAVEN_OPTS=-Xmx3g mvn -o exec:java -Dexec.classpathScope=test \
 *   -Dexec.mainClass=io.delayedtask.operator.scale.PendingTasksScale \
 *   -Doperator.jar=target/delayed-task-operator.jar [-Dtasks=50000]
 * </pre>
 */
public final class PendingTasksScale {
  private PendingTasksScale() {}

  public static void main(String[] args) throws Exception {
    int count = Integer.getInteger("tasks", 50_000);
    try (OperatorScaleLab lab = new OperatorScaleLab()) {
      Instant tomorrow = Instant.now().plus(Duration.ofDays(1));
      long createStart = System.nanoTime();
      for (int i = 0; i < count; i++) {
        lab.api.client().resource(Tasks.statusOnly(OperatorScaleLab.NAMESPACE, "p-" + i,
            tomorrow.plusMillis(i))).create();
      }
      System.out.printf("created %,d pending tasks in %d ms%n", count, (System.nanoTime() - createStart) / 1_000_000);

      RedisClient redis = RedisClient.create(lab.redis.uri());
      try (StatefulRedisConnection<String, String> connection = redis.connect()) {
        String dueKey = new io.delayedtask.operator.schedule.ScheduleKeys("delayedtask", 1).due(0);
        int port = OperatorScaleLab.freePort();
        OperatorProcess first = lab.startOperator("pending-op-1", port);
        long start = System.nanoTime();
        long readyMs = -1;
        long fullMs = -1;
        while (readyMs < 0 || fullMs < 0) {
          long elapsed = (System.nanoTime() - start) / 1_000_000;
          if (readyMs < 0 && lab.ready(port)) {
            readyMs = elapsed;
          }
          if (fullMs < 0 && connection.sync().zcard(dueKey) >= count) {
            fullMs = elapsed;
          }
          if (elapsed > 900_000) {
            throw new IllegalStateException("no full schedule after 15 min: " + connection.sync().zcard(dueKey));
          }
          Thread.sleep(200); // a measuring loop, not a test
        }
        System.out.printf("first start: ready after %d ms, schedule holds all %,d after %d ms; heap in use %,d MB%n",
            readyMs, count, fullMs, lab.heapUsedBytes(port) / (1024 * 1024));

        first.kill();
        Instant canaryDue = Instant.now().plusSeconds(2);
        lab.api.client().resource(Tasks.statusOnly(OperatorScaleLab.NAMESPACE, "canary", canaryDue)).create();
        while (Instant.now().isBefore(canaryDue)) {
          Thread.sleep(50);
        }
        int port2 = OperatorScaleLab.freePort();
        long restart = System.nanoTime();
        Instant restartedAt = Instant.now();
        try (OperatorProcess second = lab.startOperator("pending-op-2", port2)) {
          while (true) {
            DelayedTask canary = lab.api.client().resources(DelayedTask.class)
                .inNamespace(OperatorScaleLab.NAMESPACE).withName("canary").get();
            if (canary.getStatus() != null && canary.getStatus().getFiredTime() != null) {
              System.out.printf("after SIGKILL and restart: the overdue canary fired %d ms after the new process "
                  + "started (firedTime %s, restarted %s)%n", (System.nanoTime() - restart) / 1_000_000,
                  canary.getStatus().getFiredTime(), restartedAt);
              break;
            }
            Thread.sleep(100);
          }
          System.out.printf("restarted operator heap in use %,d MB%n", lab.heapUsedBytes(port2) / (1024 * 1024));
        }
      } finally {
        redis.shutdown();
      }
    }
    System.exit(0);
  }
}
