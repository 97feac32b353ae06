package io.delayedtask.operator.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.delayedtask.operator.api.v1alpha1.Condition;
import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.DeliverySpec;
import io.delayedtask.operator.api.v1alpha1.Destination;
import io.delayedtask.operator.api.v1alpha1.Phase;
import io.delayedtask.operator.config.SinkConfig;
import io.delayedtask.operator.task.status.Conditions;
import io.delayedtask.operator.task.time.Times;
import io.delayedtask.operator.testing.OperatorProcess;
import io.delayedtask.operator.testing.Receiver;
import io.delayedtask.operator.testing.Receiver.Answer;
import io.delayedtask.operator.testing.RequiresLoopbackOnlyNetwork;
import io.delayedtask.operator.testing.RequiresRealKubernetes;
import io.delayedtask.operator.testing.Tasks;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Sink deliveries across a leader's SIGKILL, on the real API server, to a receiver on 127.0.0.1:
 * half the tasks wait for a retry (their first attempt answered 503), half have a request in flight
 * (the receiver holds its answer) when the leader dies. The standby delivers every one: each {@code
 * ce-id} arrives at least once, none before its due time, none after its task recorded {@code
 * Succeeded}.
 */
@RequiresRealKubernetes
@ExtendWith(FaultLabExtension.class)
@RequiresLoopbackOnlyNetwork
class SinkLeaderKillIT {
  private static final int EACH = 10;
  private static final Duration DONE_TIMEOUT = Duration.ofSeconds(120);

  @Test
  void everyDeliveryIsMadeOnceMoreByTheStandbyAndNeverAfterItsSuccessWasRecorded(FaultLab lab) {
    try (Receiver receiver =
        Receiver.start()
            .answer("/retry", Answer.status(503))
            // Held long enough for the kill to land while all ten are open, even on a machine ten
            // times
            // slower than an idle one, and answered within the held tasks' 15 s timeout. The retry
            // tasks'
            // 20 s backoff, not this, is what the standby waits for, so the hold costs no time.
            .answer("/held", Answer.status(200).after(Duration.ofSeconds(12)))) {
      Map<String, String> env = Map.of(SinkConfig.ALLOWED_URIS, receiver.base());
      lab.startOperator("op-a", env);
      OperatorProcess leader = lab.awaitLiveLeader(Duration.ofSeconds(60));
      lab.startOperator("op-b", env);
      Instant due = Instant.now().plusSeconds(10);
      List<String> names = new ArrayList<>();
      for (int i = 0; i < EACH; i++) {
        names.add(
            lab.create(task(lab, "retry-" + i, due, receiver.base() + "/retry", "20s", "6s"))
                .getMetadata()
                .getName());
        names.add(
            lab.create(task(lab, "held-" + i, due, receiver.base() + "/held", "2s", "15s"))
                .getMetadata()
                .getName());
      }
      lab.awaitScheduled(names, Duration.ofSeconds(60));

      // The moment: every retry task waits for its second attempt, every held request is open.
      await("retries waiting and requests in flight")
          .atMost(Duration.ofSeconds(60))
          .until(
              () ->
                  receiver.requestsTo("/held").size() == EACH
                      && names.stream()
                          .filter(n -> n.startsWith("retry-"))
                          .allMatch(n -> lab.phaseOf(n) == Phase.Running));
      receiver.answer("/retry", Answer.status(200));
      receiver.answer("/held", Answer.status(200));
      leader.kill();
      assertThat(lab.get("held-0").getStatus().getPhase())
          .as("no held answer was recorded before the kill")
          .isEqualTo(Phase.Scheduled);

      await("every task delivered")
          .atMost(DONE_TIMEOUT)
          .pollInterval(Duration.ofMillis(500))
          .until(() -> names.stream().allMatch(n -> lab.phaseOf(n) == Phase.Succeeded));
      // When each success was decided (its Complete condition, to the millisecond, on this host's
      // clock as the receiver's): after its answer came, so after every request of the task
      // arrived.
      Map<String, Instant> succeededAt = new HashMap<>();
      for (String name : names) {
        DelayedTask task = lab.get(name);
        succeededAt.put(
            task.getMetadata().getUid(),
            Times.parseOrNull(
                Conditions.find(task.getStatus(), Condition.COMPLETE)
                    .orElseThrow()
                    .getLastTransitionTime()));
      }
      // Quiet afterwards: nothing is sent again once a success is recorded.
      int received = receiver.requests().size();
      await("no request after every success")
          .during(Duration.ofSeconds(3))
          .atMost(Duration.ofSeconds(15))
          .until(() -> receiver.requests().size() == received);

      Set<String> ids =
          receiver.requests().stream().map(r -> r.header("ce-id")).collect(Collectors.toSet());
      assertThat(ids).as("every task's ce-id arrived").hasSize(names.size());
      for (Receiver.Request request : receiver.requests()) {
        String uid = request.header("ce-id").substring(0, request.header("ce-id").indexOf('.'));
        assertThat(request.at())
            .as("never before the due time")
            .isAfterOrEqualTo(due.truncatedTo(java.time.temporal.ChronoUnit.MILLIS));
        // The promise itself, no slack but the condition's millisecond truncation.
        assertThat(request.at())
            .as("nothing after the task's success was decided")
            .isBefore(succeededAt.get(uid).plusMillis(1));
      }
      assertThat(receiver.requestsTo("/held"))
          .as("each held request sent again by the standby")
          .hasSizeGreaterThanOrEqualTo(2 * EACH);
    }
  }

  private static DelayedTask task(
      FaultLab lab, String name, Instant due, String uri, String backoffDelay, String timeout) {
    return Tasks.task(
        lab.namespace,
        name,
        s -> {
          s.setRunAt(Tasks.rfc3339(due));
          Destination sink = new Destination();
          sink.setUri(uri);
          s.setSink(sink);
          DeliverySpec delivery = new DeliverySpec();
          delivery.setBackoffDelay(backoffDelay);
          delivery.setTimeout(timeout);
          s.setDelivery(delivery);
        });
  }
}
