package io.delayedtask.operator.leader;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.testing.ApiFault;
import io.delayedtask.operator.testing.MockApiServer;
import io.delayedtask.operator.testing.Tasks;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.Operator;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The task cache counts as synced from the informers' own state, not from JOSDK's start returning:
 * with {@code withStopOnInformerErrorDuringStartup(false)} (as the operator runs) start returns
 * while the informer's list still fails, and a resync on that empty cache would drop entries.
 */
class InformerTaskCacheIT {

  /**
   * Only there to make JOSDK list and watch the tasks, and to hand over its cache as the operator's
   * reconciler does.
   */
  static final class Attaching implements Reconciler<DelayedTask> {
    private final InformerTaskCache cache;

    Attaching(InformerTaskCache cache) {
      this.cache = cache;
    }

    @Override
    public List<EventSource<?, DelayedTask>> prepareEventSources(
        io.javaoperatorsdk.operator.api.reconciler.EventSourceContext<DelayedTask> context) {
      cache.attach(context.getPrimaryCache());
      return List.of();
    }

    @Override
    public UpdateControl<DelayedTask> reconcile(DelayedTask task, Context<DelayedTask> context) {
      return UpdateControl.noUpdate();
    }
  }

  @Test
  void notSyncedWhileTheInformersListFailsEvenThoughJosdkHasStarted() {
    try (MockApiServer api = MockApiServer.start();
        KubernetesClient client = api.newClient()) {
      Tasks.create(
          api.client(), Tasks.statusOnly("ns", "waiting", Instant.now().plusSeconds(3600)));
      ApiFault listFails =
          api.inject(ApiFault.of("GET", ".*/namespaces/ns/delayedtasks(\\?.*)?", 500, 1_000_000));
      InformerTaskCache cache = new InformerTaskCache();
      Operator operator =
          new Operator(
              o ->
                  o.withKubernetesClient(client)
                      .withStopOnInformerErrorDuringStartup(false)
                      .withCacheSyncTimeout(Duration.ofSeconds(2))
                      .withCloseClientOnStop(false));
      operator.register(new Attaching(cache), c -> c.settingNamespaces("ns"));
      try {
        operator.start();
        cache.startedWith(operator.getRuntimeInfo());

        assertThat(listFails.hits()).as("the informer has tried to list").isPositive();
        assertThat(cache.synced()).as("the informer has listed nothing yet").isFalse();

        api.clearFaults();
        await().atMost(Duration.ofSeconds(30)).until(cache::synced);
        assertThat(cache.get("ns", "waiting")).isPresent();
      } finally {
        operator.stop();
      }
    }
  }
}
