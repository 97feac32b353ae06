package io.delayedtask.operator.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.delayedtask.operator.api.v1alpha1.Condition;
import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.time.Instant;

/**
 * A finished task's TTL, measured from when it finished (its condition), not from when a test
 * noticed.
 */
public final class TtlExpiry {
  /**
   * Past the deadline, how late the deletion may be seen: the operator's timer plus a loaded
   * machine. A promise's bound (deleted when the TTL runs out, not whenever), so not a wait to make
   * ten times longer: it must stay below what a wrong TTL adds (the tests' 8 s TTLs counted twice
   * are 8 s late, the seen-failing break {@code ttl}), and the wait above it leaves 10 s more
   * before giving up.
   */
  private static final Duration LATE = Duration.ofSeconds(5);

  private TtlExpiry() {}

  /**
   * Asserts the task is deleted {@code ttl} after its {@code finishedType} condition (Fired,
   * Failed, ...) turned True: never seen gone before then, seen gone within a few seconds after.
   * The condition's time has whole seconds (the real transition is up to 1 s later), hence a second
   * of slack; a read that is slow under load may leave the last sighting up to another second
   * before the deadline. Call it while the task is still there (a TTL of a few seconds).
   */
  public static void assertDeletedWhenTtlRunsOut(
      KubernetesClient client, String namespace, String name, String finishedType, Duration ttl) {
    DelayedTask task = Tasks.get(client, namespace, name);
    assertThat(task).as("%s, still there when its TTL starts to be watched", name).isNotNull();
    Condition finished =
        task.getStatus().getConditions().stream()
            .filter(c -> finishedType.equals(c.getType()))
            .findFirst()
            .orElseThrow(() -> new AssertionError("no " + finishedType + " condition on " + name));
    assertThat(finished.getStatus()).isEqualTo("True");
    Instant deadline = Instant.parse(finished.getLastTransitionTime()).plus(ttl);
    Instant[] lastSeenPresent = {Instant.MIN};
    await(name + " deleted by its TTL")
        .atMost(ttl.plus(LATE).plusSeconds(10))
        .pollInterval(Duration.ofMillis(100))
        .until(
            () -> {
              Instant asked = Instant.now();
              boolean gone = Tasks.get(client, namespace, name) == null;
              if (!gone) {
                lastSeenPresent[0] = asked;
              }
              return gone;
            });
    Instant seenGone = Instant.now();
    assertThat(seenGone)
        .as("%s seen deleted; its TTL ran out at %s", name, deadline)
        .isAfterOrEqualTo(deadline)
        .isBefore(deadline.plusSeconds(1).plus(LATE));
    assertThat(lastSeenPresent[0])
        .as("%s last seen present; its TTL ran out at %s", name, deadline)
        .isAfterOrEqualTo(deadline.minusSeconds(2));
  }
}
