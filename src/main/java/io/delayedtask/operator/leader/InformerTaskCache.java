package io.delayedtask.operator.leader;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.javaoperatorsdk.operator.RegisteredController;
import io.javaoperatorsdk.operator.RuntimeInfo;
import io.javaoperatorsdk.operator.api.reconciler.IndexedResourceCache;
import io.javaoperatorsdk.operator.health.InformerHealthIndicator;
import io.javaoperatorsdk.operator.health.InformerWrappingEventSourceHealthIndicator;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;

/**
 * {@link TaskCache} over JOSDK's cache of the primary resources. The reconciler attaches the cache
 * when JOSDK registers it. It counts as synced only once every informer of the operator reports
 * {@code hasSynced()} (fabric8: its first list is in the store): JOSDK's {@code Operator.start()}
 * returning is not enough, since with {@code withStopOnInformerErrorDuringStartup(false)} it
 * returns while an informer whose list failed is still retrying, and a resync on that half-empty
 * cache would drop entries.
 */
public final class InformerTaskCache implements TaskCache {
  private volatile IndexedResourceCache<DelayedTask> cache;
  private volatile BooleanSupplier informersSynced = () -> false;

  /** Latched: an informer that has synced once keeps its store through relists. */
  private volatile boolean synced;

  /** Called once, from the reconciler's {@code prepareEventSources}. */
  public void attach(IndexedResourceCache<DelayedTask> primaryCache) {
    this.cache = primaryCache;
  }

  /**
   * Called once JOSDK's Operator.start() has returned: synced from then on when its informers say
   * so.
   */
  public void startedWith(RuntimeInfo operator) {
    informersSynced = () -> informersSynced(operator);
  }

  /** Every informer of every controller has listed what the API server had. */
  static boolean informersSynced(RuntimeInfo operator) {
    for (RegisteredController<?> controller : operator.getRegisteredControllers()) {
      for (InformerWrappingEventSourceHealthIndicator<?> source :
          controller.getControllerHealthInfo().informerEventSourceHealthIndicators().values()) {
        for (InformerHealthIndicator informer : source.informerHealthIndicators().values()) {
          if (!informer.hasSynced()) {
            return false;
          }
        }
      }
    }
    return true;
  }

  @Override
  public boolean synced() {
    if (!synced && cache != null && informersSynced.getAsBoolean()) {
      synced = true;
    }
    return synced;
  }

  @Override
  public Optional<DelayedTask> get(String namespace, String name) {
    IndexedResourceCache<DelayedTask> current = cache;
    return current == null ? Optional.empty() : current.get(new ResourceID(name, namespace));
  }

  @Override
  public Stream<DelayedTask> all() {
    IndexedResourceCache<DelayedTask> current = cache;
    return current == null ? Stream.empty() : current.list();
  }
}
