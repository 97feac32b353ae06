package io.delayedtask.operator.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.delayedtask.operator.api.v1alpha1.Phase;
import io.delayedtask.operator.testing.ApiFault;
import io.delayedtask.operator.testing.OperatorProcess;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The leader dies with SIGKILL (no shutdown hook, its Lease and its Redis claims left behind) at
 * the worst moments: the standby takes over after the lease runs out and fires every task once.
 */
@ExtendWith(FaultLabExtension.class)
class LeaderKillIT {
  private static final Duration FIRE_TIMEOUT = Duration.ofSeconds(120);
  /** Well short of the claim lease, so only a takeover, not the lease running out, can pass. */
  private static final Duration TAKEOVER_TIMEOUT = FaultLab.CLAIM_LEASE.minusSeconds(10);
  @Test
  void standbyFiresAllOnceWhenTheLeaderIsKilledAtTheInstantTheyFallDue(FaultLab lab) {
    OperatorProcess first = lab.startOperator("op-a");
    lab.awaitLiveLeader(Duration.ofSeconds(60));
    lab.startOperator("op-b");
    Instant due = Instant.now().plusSeconds(15);
    List<String> names = new ArrayList<>(lab.createTasks("at-due-job", 50, i -> due, true));
    names.addAll(lab.createTasks("at-due-status", 50, i -> due, false));
    lab.awaitScheduled(names, Duration.ofSeconds(60));

    FaultLab.awaitInstant(due);
    OperatorProcess leader = lab.liveLeader().orElse(first);
    leader.kill();

    lab.awaitAllFiredOnceNotEarly(names, FIRE_TIMEOUT);
  }

  @Test
  void standbyFiresAllOnceWhenTheLeaderIsKilledRightAfterClaiming(FaultLab lab) {
    lab.startOperator("op-a");
    OperatorProcess leader = lab.awaitLiveLeader(Duration.ofSeconds(60));
    lab.startOperator("op-b");
    // The failpoint is the API server: it holds every firing effect (Job creation, the firer's
    // status write, which alone says Fired) for a minute, so the leader claims the batch and then
    // sits in the requests, with the claims in Redis and nothing durable done.
    ApiFault jobsHang = lab.api.inject(ApiFault.of("POST", "/apis/batch/v1/namespaces/[^/]+/jobs", 503, -1)
        .delayed(Duration.ofSeconds(60)));
    ApiFault firedStatusHangs = lab.api.inject(ApiFault.of("PUT",
        "/apis/delayedtask\\.io/v1alpha1/namespaces/[^/]+/delayedtasks/[^/]+/status", 503, -1)
        .whenBodyContains("\"phase\":\"Fired\"").delayed(Duration.ofSeconds(60)));
    Instant due = Instant.now().plusSeconds(12);
    List<String> names = new ArrayList<>(lab.createTasks("claimed-job", 50, i -> due, true));
    names.addAll(lab.createTasks("claimed-status", 50, i -> due, false));

    // One claim takes the whole batch (100) at once; the poller's workers then sit in the first
    // requests, so one held request means every task is claimed and none is done.
    await("the leader claimed and started firing").atMost(Duration.ofSeconds(90))
        .until(() -> jobsHang.hits() + firedStatusHangs.hits() > 0);
    leader.kill();
    lab.api.clearFaults();

    // The dead leader's claims were made about a second before the kill with a 30 s claim lease.
    // The standby takes them over when it leads (after the 5 s Lease), so all fire well before that
    // claim lease runs out; without the takeover none could fire until then.
    lab.awaitAllFiredOnceNotEarly(names, TAKEOVER_TIMEOUT);
  }

  @ParameterizedTest(name = "{0} replicas")
  @ValueSource(ints = {2, 3})
  void repeatedLeaderKillsWhileTasksKeepFallingDue(int replicas, FaultLab lab) {
    for (int i = 0; i < replicas; i++) {
      lab.startOperator("op-" + i);
    }
    lab.awaitLiveLeader(Duration.ofSeconds(60));
    Instant start = Instant.now().plusSeconds(8);
    // 40 tasks falling due one every half second, half with Jobs, across the kills below: 20 s,
    // about as long as two kills take with the lab's 5 s Lease (each: 3 s of firing, then the
    // Lease running out and the standby taking over).
    List<String> names = new ArrayList<>(lab.createTasks("stream-job", 20, i -> start.plusMillis(1_000L * i), true));
    names.addAll(lab.createTasks("stream-status", 20, i -> start.plusMillis(500L + 1_000L * i), false));

    int replacements = 0;
    for (int kill = 0; kill < 2; kill++) {
      OperatorProcess leader = lab.awaitLiveLeader(Duration.ofSeconds(60));
      FaultLab.awaitInstant(Instant.now().plusSeconds(3)); // let it fire a few first
      leader.kill();
      lab.startOperator("op-r" + replacements++); // the Deployment brings a replacement pod
    }

    lab.awaitAllFiredOnceNotEarly(names, FIRE_TIMEOUT);
    assertThat(lab.liveLeader()).isPresent();
  }
}
