package io.delayedtask.operator.scale;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.DelayedTaskStatus;
import io.delayedtask.operator.api.v1alpha1.Phase;
import io.delayedtask.operator.testing.BuildIdentity;
import io.delayedtask.operator.testing.MockApiServer;
import io.delayedtask.operator.testing.Tasks;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.time.Instant;

/**
 * Scale run (not a test): how many requests per second the test API server (the fabric8 CRUD mock
 * with {@code IndexedCrudDispatcher}) serves as it fills, so the operator scale runs can tell its
 * limits from the operator's. For each block of 1,000 DelayedTasks: creates, GETs by name, and
 * status PUTs, the three requests the operator makes per task; no operator runs.
 *
 * <pre>
 * mvn -o exec:java -Dexec.classpathScope=test \
 *   -Dexec.mainClass=io.delayedtask.operator.scale.MockStoreThroughput [-Dtasks=20000]
 * </pre>
 */
public final class MockStoreThroughput {
  private static final String NAMESPACE = "store";
  private static final int BLOCK = 1_000;

  private MockStoreThroughput() {}

  public static void main(String[] args) {
    int count = Integer.getInteger("tasks", 20_000);
    // No operator here: what is measured is the test API server, i.e. the harness's own classes.
    System.out.printf(
        "===== MockStoreThroughput, %,d tasks; %s; %s =====%n",
        count, BuildIdentity.classes(MockApiServer.class), ProcessMeter.loadAverage());
    try (MockApiServer api = MockApiServer.start()) {
      KubernetesClient client = api.client();
      client
          .namespaces()
          .resource(
              new NamespaceBuilder().withNewMetadata().withName(NAMESPACE).endMetadata().build())
          .create();
      Instant due = Instant.now().plus(Duration.ofDays(1));
      System.out.printf("%10s %12s %12s %12s%n", "objects", "creates/s", "gets/s", "status PUTs/s");
      for (int from = 0; from < count; from += BLOCK) {
        int to = Math.min(count, from + BLOCK);
        long start = System.nanoTime();
        for (int i = from; i < to; i++) {
          client.resource(Tasks.statusOnly(NAMESPACE, "t-" + i, due.plusMillis(i))).create();
        }
        long created = System.nanoTime();
        DelayedTask[] read = new DelayedTask[to - from];
        for (int i = from; i < to; i++) {
          read[i - from] = Tasks.get(client, NAMESPACE, "t-" + i);
        }
        long got = System.nanoTime();
        for (DelayedTask task : read) {
          DelayedTaskStatus status = new DelayedTaskStatus();
          status.setPhase(Phase.Scheduled);
          task.setStatus(status);
          client.resource(task).updateStatus();
        }
        long put = System.nanoTime();
        System.out.printf(
            "%,10d %12.0f %12.0f %12.0f%n",
            to,
            perSecond(to - from, created - start),
            perSecond(to - from, got - created),
            perSecond(to - from, put - got));
      }
    }
  }

  private static double perSecond(int requests, long nanos) {
    return requests * 1e9 / nanos;
  }
}
