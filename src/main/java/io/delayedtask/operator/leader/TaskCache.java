package io.delayedtask.operator.leader;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * The DelayedTasks as this process knows them: JOSDK's informer cache, the same copy the reconciler
 * decides from. The leader's duties read it instead of the API server, so a resync or a claim costs
 * no request.
 */
public interface TaskCache {

  /** True once the cache holds what the API server had when the watch started. */
  boolean synced();

  /** The task of that name, as last seen (the reconciler's own latest status write included). */
  Optional<DelayedTask> get(String namespace, String name);

  /** Every task known, in no particular order. */
  Stream<DelayedTask> all();
}
