package io.delayedtask.operator.task.spec;

import java.util.Collection;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What the spec of each task (by uid) says, for the generation it was computed at: the reconcile,
 * the resync and the leader's claims all ask, and a spec changes only with its generation
 * (creationTimestamp, which spec.delay counts from, never does). {@link #retainOnly} drops tasks
 * that are gone.
 */
final class SpecVerdicts {
  private final Map<String, Verdict> byUid = new ConcurrentHashMap<>();

  private record Verdict(long generation, Validation validation) {}

  /** The verdict remembered for this generation of the task, if any. */
  Optional<Validation> of(String uid, long generation) {
    Verdict known = byUid.get(uid);
    return known != null && known.generation() == generation
        ? Optional.of(known.validation())
        : Optional.empty();
  }

  void remember(String uid, long generation, Validation validation) {
    byUid.put(uid, new Verdict(generation, validation));
  }

  /** Forgets the tasks whose uid is not in {@code liveUids}. */
  void retainOnly(Collection<String> liveUids) {
    byUid.keySet().retainAll(liveUids instanceof Set<?> ? liveUids : Set.copyOf(liveUids));
  }

  int size() {
    return byUid.size();
  }
}
