package io.delayedtask.operator.testing;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.leader.TaskCache;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Stream;

/**
 * A synced {@link TaskCache} holding the tasks a test puts in it, as an informer would have them.
 */
public final class FixedTaskCache implements TaskCache {
  private final List<DelayedTask> tasks = new CopyOnWriteArrayList<>();

  public static FixedTaskCache of(DelayedTask... tasks) {
    FixedTaskCache cache = new FixedTaskCache();
    cache.tasks.addAll(List.of(tasks));
    return cache;
  }

  /** Adds or replaces (by namespace and name) a task. */
  public FixedTaskCache put(DelayedTask task) {
    remove(task.getMetadata().getNamespace(), task.getMetadata().getName());
    tasks.add(task);
    return this;
  }

  public void remove(String namespace, String name) {
    tasks.removeIf(
        t ->
            Objects.equals(t.getMetadata().getNamespace(), namespace)
                && Objects.equals(t.getMetadata().getName(), name));
  }

  @Override
  public boolean synced() {
    return true;
  }

  @Override
  public Optional<DelayedTask> get(String namespace, String name) {
    return tasks.stream()
        .filter(
            t ->
                Objects.equals(t.getMetadata().getNamespace(), namespace)
                    && Objects.equals(t.getMetadata().getName(), name))
        .findFirst();
  }

  @Override
  public Stream<DelayedTask> all() {
    return tasks.stream();
  }
}
