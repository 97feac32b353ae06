package io.delayedtask.operator.schedule;

import java.util.Objects;
import java.util.Optional;

/**
 * A DelayedTaskQueue by namespace and name: the key group in Redis its tasks wait in (see
 * package-info, "Queues").
 */
public record QueueRef(String namespace, String name) {
  public QueueRef {
    if (namespace == null || namespace.isEmpty() || name == null || name.isEmpty()) {
      throw new IllegalArgumentException(
          "a queue needs a namespace and a name, got " + namespace + "/" + name);
    }
    if ((namespace + name).contains("{")
        || (namespace + name).contains("}")
        || (namespace + name).contains(" ")
        || namespace.contains("/")
        || name.contains("/")) {
      throw new IllegalArgumentException(
          "a queue's namespace and name are DNS labels, got " + namespace + "/" + name);
    }
  }

  /** "namespace/name", as {@link #parse} reads it. */
  @Override
  public String toString() {
    return namespace + "/" + name;
  }

  /** The queue named by "namespace/name", or empty for anything else. */
  public static Optional<QueueRef> parse(String value) {
    if (value == null) {
      return Optional.empty();
    }
    int slash = value.indexOf('/');
    if (slash <= 0 || slash == value.length() - 1) {
      return Optional.empty();
    }
    try {
      return Optional.of(new QueueRef(value.substring(0, slash), value.substring(slash + 1)));
    } catch (IllegalArgumentException e) {
      return Optional.empty();
    }
  }

  /** The queue a task names in spec.queue, if it names one. */
  public static Optional<QueueRef> of(String namespace, String queue) {
    return queue == null || queue.isEmpty()
        ? Optional.empty()
        : Optional.of(new QueueRef(Objects.requireNonNull(namespace), queue));
  }
}
