package io.delayedtask.operator.task.cache;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.informers.cache.BasicItemStore;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import java.util.function.Consumer;

/**
 * An informer store that keeps objects without {@code metadata.managedFields}, as
 * controller-runtime's {@code TransformStripManagedFields} does: the server-side-apply bookkeeping
 * the API server adds to every object is nothing the operator reads, and at 50,000 tasks it is a
 * good part of the cache. A write built from a cached object omits the field, which the API server
 * takes as "keep what is there". Tasks and Jobs lose more ({@link CachedObjects}).
 */
public final class LeanItemStore<V extends HasMetadata> extends BasicItemStore<V> {
  private final Consumer<V> trim;

  private LeanItemStore(Consumer<V> trim) {
    super(Cache::metaNamespaceKeyFunc);
    this.trim = trim;
  }

  /** Any kind, without managedFields only. */
  public static <V extends HasMetadata> LeanItemStore<V> withoutManagedFields() {
    return new LeanItemStore<>(object -> {});
  }

  /** Any kind, without managedFields and with what {@code trim} drops. */
  public static <V extends HasMetadata> LeanItemStore<V> trimming(Consumer<V> trim) {
    return new LeanItemStore<>(trim);
  }

  /** Tasks, large ones without their payload, data and jobTemplate. */
  public static LeanItemStore<DelayedTask> forTasks() {
    return new LeanItemStore<>(CachedObjects::trimTask);
  }

  /** Jobs, without their pod template and payload annotations. */
  public static LeanItemStore<Job> forJobs() {
    return new LeanItemStore<>(CachedObjects::trimJob);
  }

  @Override
  public V put(String key, V object) {
    if (object.getMetadata() != null) {
      object.getMetadata().setManagedFields(null);
    }
    trim.accept(object);
    return super.put(key, object);
  }
}
