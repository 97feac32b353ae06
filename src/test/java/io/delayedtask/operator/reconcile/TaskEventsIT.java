package io.delayedtask.operator.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.testing.RealKubernetes;
import io.delayedtask.operator.testing.RequiresRealKubernetes;
import io.delayedtask.operator.testing.Tasks;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.http.BasicBuilder;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.Interceptor;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** One Event per (task, reason) on the real API server: repeats raise its count. */
@RequiresRealKubernetes
class TaskEventsIT {
  private static String NS;
  private static RealKubernetes kube;
  private static KubernetesClient client;

  @BeforeAll
  static void start() {
    kube = RealKubernetes.shared();
    NS = kube.createNamespace("events");
    client = kube.client();
  }

  private static DelayedTask taskNamed(String name) {
    return Tasks.create(client, Tasks.task(NS, name, s -> s.setDelay("1m")));
  }

  private static List<Event> eventsOf(DelayedTask task) {
    return client.v1().events().inNamespace(NS).list().getItems().stream()
        .filter(e -> task.getMetadata().getUid().equals(e.getInvolvedObject().getUid()))
        .toList();
  }

  @Test
  void theSameReasonTwiceIsOneEventWithCountTwo() {
    DelayedTask task = taskNamed("repeated");
    new TaskEvents(client, Clock.fixed(Instant.parse("2026-12-02T10:00:00Z"), ZoneOffset.UTC))
        .normal(task, TaskEvents.SCHEDULED, "Scheduled to fire at 2026-12-02T10:01:00.000Z");
    new TaskEvents(client, Clock.fixed(Instant.parse("2026-12-02T10:00:05Z"), ZoneOffset.UTC))
        .normal(task, TaskEvents.SCHEDULED, "Scheduled to fire at 2026-12-02T10:02:00.000Z");

    assertThat(eventsOf(task))
        .singleElement()
        .satisfies(
            event -> {
              assertThat(event.getMetadata().getName())
                  .isEqualTo(TaskEvents.eventName(task, TaskEvents.SCHEDULED))
                  .startsWith("repeated.");
              assertThat(event.getReason()).isEqualTo("Scheduled");
              assertThat(event.getCount()).isEqualTo(2);
              // The API server keeps Event times to the second (metav1.Time), whatever precision
              // was sent.
              assertThat(Instant.parse(event.getFirstTimestamp()))
                  .isEqualTo("2026-12-02T10:00:00Z");
              assertThat(Instant.parse(event.getLastTimestamp())).isEqualTo("2026-12-02T10:00:05Z");
              assertThat(event.getMessage())
                  .isEqualTo("Scheduled to fire at 2026-12-02T10:02:00.000Z");
            });
  }

  @Test
  void differentReasonsAreDifferentEvents() {
    DelayedTask task = taskNamed("two-reasons");
    TaskEvents events = new TaskEvents(client, Clock.systemUTC());
    events.normal(task, TaskEvents.SCHEDULED, "Scheduled to fire at 2026-12-02T10:01:00.000Z");
    events.normal(task, TaskEvents.FIRED, "Fired at 2026-12-02T10:01:00.003Z");
    events.normal(task, TaskEvents.FIRED, "Fired at 2026-12-02T10:01:00.003Z");

    assertThat(eventsOf(task))
        .extracting(e -> e.getReason() + "x" + e.getCount())
        .containsExactlyInAnyOrder("Scheduledx1", "Firedx2");
  }

  @Test
  void aTaskOfTheSameNameCreatedAgainGetsEventsOfItsOwn() {
    DelayedTask first = taskNamed("recreated");
    TaskEvents events = new TaskEvents(client, Clock.systemUTC());
    events.normal(first, TaskEvents.FIRED, "Fired");
    client.resource(first).delete();
    DelayedTask second = taskNamed("recreated");
    events.normal(second, TaskEvents.FIRED, "Fired");

    assertThat(TaskEvents.eventName(second, TaskEvents.FIRED))
        .isNotEqualTo(TaskEvents.eventName(first, TaskEvents.FIRED));
    assertThat(eventsOf(second))
        .singleElement()
        .satisfies(e -> assertThat(e.getCount()).isEqualTo(1));
  }

  @Test
  void aLongTaskNameIsShortenedToAValidEventName() {
    DelayedTask task =
        Tasks.task(NS, "a".repeat(235) + "-" + "b".repeat(17), s -> s.setDelay("1m"));
    task.getMetadata().setUid("uid-1");
    String name = TaskEvents.eventName(task, TaskEvents.FIRED);
    assertThat(name)
        .hasSizeLessThanOrEqualTo(253)
        .matches("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
  }

  @Test
  void aRepeatThisProcessWroteIsOnePatchAndOneFromAnotherWriterLosesNoCount() {
    DelayedTask task = taskNamed("retried");
    List<String> requests = java.util.Collections.synchronizedList(new java.util.ArrayList<>());
    Interceptor counting =
        new Interceptor() {
          @Override
          public void before(
              BasicBuilder builder, HttpRequest request, Interceptor.RequestTags tags) {
            requests.add(request.method());
          }
        };
    try (KubernetesClient countedClient =
        new KubernetesClientBuilder()
            .withConfig(client.getConfiguration())
            .withHttpClientBuilderConsumer(b -> b.addOrReplaceInterceptor("count", counting))
            .build()) {
      TaskEvents events = new TaskEvents(countedClient, Clock.systemUTC());
      events.warning(task, TaskEvents.DELIVERY_FAILED, "attempt 1");
      events.warning(task, TaskEvents.DELIVERY_FAILED, "attempt 2");
      events.warning(task, TaskEvents.DELIVERY_FAILED, "attempt 3");

      assertThat(requests)
          .as("create, then one patch a repeat")
          .containsExactly("POST", "PATCH", "PATCH");

      // Another replica (a TaskEvents of its own) repeats it: this one's remembered version is
      // stale.
      new TaskEvents(client, Clock.systemUTC())
          .warning(task, TaskEvents.DELIVERY_FAILED, "attempt 4");
      requests.clear();
      events.warning(task, TaskEvents.DELIVERY_FAILED, "attempt 5");
      assertThat(requests)
          .as("the stale patch refused, then create, read and patch")
          .containsExactly("PATCH", "POST", "GET", "PATCH");
    }
    assertThat(eventsOf(task))
        .singleElement()
        .satisfies(
            event -> {
              assertThat(event.getCount()).isEqualTo(5);
              assertThat(event.getMessage()).isEqualTo("attempt 5");
              assertThat(event.getType()).isEqualTo("Warning");
            });
  }
}
