package io.delayedtask.operator.leader;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.javaoperatorsdk.operator.api.reconciler.IndexedResourceCache;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * {@link TaskCache} over JOSDK's cache of the primary resources. The reconciler attaches the cache
 * when JOSDK registers it; the operator marks it synced once JOSDK has started, which it does only
 * after its informers have listed what the API server has.
 */
public final class InformerTaskCache implements TaskCache {
  private volatile IndexedResourceCache<DelayedTask> cache;
  private volatile boolean started;

  /** Called once, from the reconciler's {@code prepareEventSources}. */
  public void attach(IndexedResourceCache<DelayedTask> primaryCache) {
    this.cache = primaryCache;
  }

  /** Called once JOSDK's Operator.start() has returned. */
  public void markSynced() {
    started = true;
  }

  @Override
  public boolean synced() {
    return started && cache != null;
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
