package io.delayedtask.operator.leader;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import java.util.Optional;

/**
 * Schedule entry ids: "namespace/name/uid". The uid tells a re-created task of the same name from
 * the one an old entry was written for.
 */
public final class ScheduleIds {
  private ScheduleIds() {}

  public static String idOf(DelayedTask task) {
    return task.getMetadata().getNamespace()
        + "/"
        + task.getMetadata().getName()
        + "/"
        + task.getMetadata().getUid();
  }

  /** The parts of an id; empty when it is not one of ours. */
  public static Optional<TaskRef> parse(String id) {
    String[] parts = id.split("/", -1);
    if (parts.length != 3 || parts[0].isEmpty() || parts[1].isEmpty() || parts[2].isEmpty()) {
      return Optional.empty();
    }
    return Optional.of(new TaskRef(parts[0], parts[1], parts[2]));
  }

  public record TaskRef(String namespace, String name, String uid) {}
}
