package io.delayedtask.operator.testing;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.List;

/**
 * The Kubernetes Events a task got. The operator folds a repeated reason into one Event whose
 * {@code count} grows, so "how often" is the sum of the counts, never the number of Event objects.
 */
public final class Events {
  private Events() {}

  /** The reasons of the task's Events, each Event once (a folded repeat shows once). */
  public static List<String> reasons(KubernetesClient client, String namespace, String taskName) {
    return of(client, namespace, taskName).stream().map(Event::getReason).toList();
  }

  /** How many times the task was given {@code reason}: the Events' counts summed. */
  public static int count(
      KubernetesClient client, String namespace, String taskName, String reason) {
    return of(client, namespace, taskName).stream()
        .filter(e -> reason.equals(e.getReason()))
        .mapToInt(e -> e.getCount() == null ? 1 : e.getCount())
        .sum();
  }

  private static List<Event> of(KubernetesClient client, String namespace, String taskName) {
    return client.v1().events().inNamespace(namespace).list().getItems().stream()
        .filter(e -> taskName.equals(e.getInvolvedObject().getName()))
        .toList();
  }
}
