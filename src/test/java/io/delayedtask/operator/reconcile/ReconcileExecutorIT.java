package io.delayedtask.operator.reconcile;

import static org.awaitility.Awaitility.await;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.testing.MockApiServer;
import io.delayedtask.operator.testing.Tasks;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.Operator;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import java.time.Duration;
import java.time.Instant;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;

/**
 * The JOSDK in use names the task of each reconcile it submits where {@link ReconcileExecutor}
 * reads it (the MDC on the submitting thread): without that, a claimed task would wait in arrival
 * order like any other. A real JOSDK operator on the mock API server.
 */
class ReconcileExecutorIT {

  static final class NoOp implements Reconciler<DelayedTask> {
    @Override
    public UpdateControl<DelayedTask> reconcile(DelayedTask task, Context<DelayedTask> context) {
      return UpdateControl.noUpdate();
    }
  }

  @Test
  void josdkNamesTheTaskOfEachReconcileItSubmits() {
    Set<ResourceID> asked = ConcurrentHashMap.newKeySet();
    ReconcileExecutor executor =
        new ReconcileExecutor(
            2,
            task -> {
              asked.add(task);
              return false;
            },
            task -> false);
    try (MockApiServer api = MockApiServer.start();
        KubernetesClient client = api.newClient()) {
      Operator operator =
          new Operator(
              o ->
                  o.withKubernetesClient(client)
                      .withExecutorService(executor)
                      .withCloseClientOnStop(false));
      operator.register(new NoOp(), c -> c.settingNamespaces("ns"));
      try {
        operator.start();
        Tasks.create(
            api.client(), Tasks.statusOnly("ns", "probe", Instant.now().plusSeconds(3600)));

        await()
            .atMost(Duration.ofSeconds(30))
            .until(() -> asked.contains(new ResourceID("probe", "ns")));
      } finally {
        operator.stop();
      }
    }
  }
}
