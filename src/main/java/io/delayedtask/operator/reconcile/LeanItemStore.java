package io.delayedtask.operator.reconcile;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.informers.cache.BasicItemStore;
import io.fabric8.kubernetes.client.informers.cache.Cache;

/**
 * An informer store that keeps objects without {@code metadata.managedFields}, as
 * controller-runtime's {@code TransformStripManagedFields} does: the server-side-apply bookkeeping
 * the API server adds to every object is nothing the operator reads, and at 50,000 tasks it is a
 * good part of the cache. A write built from a cached object omits the field, which the API server
 * takes as "keep what is there".
 */
public final class LeanItemStore<V extends HasMetadata> extends BasicItemStore<V> {

  public LeanItemStore() {
    super(Cache::metaNamespaceKeyFunc);
  }

  @Override
  public V put(String key, V object) {
    if (object.getMetadata() != null) {
      object.getMetadata().setManagedFields(null);
    }
    return super.put(key, object);
  }
}
