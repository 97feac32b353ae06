package io.delayedtask.operator.testing;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import java.time.Instant;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

/**
 * The one "fired once" rule of the tests: every distinct firedTime a task's status ever showed, by
 * task uid, fed with each version of a task a watch delivers. A task that showed two firedTimes
 * fired twice, even if the second overwrote the first before anyone looked.
 */
public final class FiredTimes {
  private final Map<String, Set<String>> byTaskUid = new ConcurrentHashMap<>();
  private final Map<String, Instant> firstSeenAt = new ConcurrentHashMap<>();

  /** One version of a task, as a watch delivered it now. */
  public void record(DelayedTask task) {
    if (task.getStatus() != null && task.getStatus().getFiredTime() != null) {
      String uid = task.getMetadata().getUid();
      byTaskUid
          .computeIfAbsent(uid, k -> ConcurrentHashMap.newKeySet())
          .add(task.getStatus().getFiredTime());
      firstSeenAt.putIfAbsent(uid, Instant.now());
    }
  }

  /** Every distinct firedTime each task's status has shown, by task uid. */
  public Map<String, Set<String>> byTaskUid() {
    return Map.copyOf(byTaskUid);
  }

  /** When a firedTime was first seen on each task, by task uid. */
  public Map<String, Instant> firstSeenAt() {
    return Map.copyOf(firstSeenAt);
  }

  /** Uids of the tasks that showed more than one firedTime: each fired more than once. */
  public Set<String> firedMoreThanOnce() {
    return byTaskUid.entrySet().stream()
        .filter(e -> e.getValue().size() > 1)
        .map(Map.Entry::getKey)
        .collect(Collectors.toSet());
  }
}
