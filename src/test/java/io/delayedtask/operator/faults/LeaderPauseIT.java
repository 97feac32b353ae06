package io.delayedtask.operator.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.delayedtask.operator.testing.ApiFault;
import io.delayedtask.operator.testing.FiringInvariants;
import io.delayedtask.operator.testing.OperatorProcess;
import io.delayedtask.operator.testing.RequiresLoopbackOnlyNetwork;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The leader freezes (SIGSTOP, as in a long GC pause or a stalled node) in the middle of firing,
 * longer than its lease: the standby takes over and fires; then the old leader wakes (SIGCONT)
 * still holding claims and half-done requests, believing it leads. Nothing may fire twice.
 */
@ExtendWith(FaultLabExtension.class)
@RequiresLoopbackOnlyNetwork
class LeaderPauseIT {
  @Test
  void aLeaderPausedLongerThanItsLeaseFiresNothingTwiceWhenItWakes(FaultLab lab) {
    lab.startOperator("op-a");
    OperatorProcess leader = lab.awaitLiveLeader(Duration.ofSeconds(60));
    lab.startOperator("op-b");
    // Slow the Job creations down so the freeze catches the leader with claims and requests in
    // flight.
    ApiFault slowJobs =
        lab.api.inject(
            ApiFault.of("POST", "/apis/batch/v1/namespaces/[^/]+/jobs", 503, 5)
                .delayed(Duration.ofSeconds(3)));
    Instant due = Instant.now().plusSeconds(12);
    List<String> names = new ArrayList<>(lab.createTasks("paused-job", 20, i -> due, true));
    names.addAll(lab.createTasks("paused-status", 20, i -> due, false));
    await("the leader is firing").atMost(Duration.ofSeconds(90)).until(() -> slowJobs.hits() > 0);

    leader.pause();
    // Frozen while holding claims (so waking can only hurt if the takeover is wrong): Redis shows
    // tasks in flight that the frozen leader cannot acknowledge.
    assertThat(lab.scheduleSnapshot().inFlight())
        .as("claims %s held when frozen", leader.name())
        .isNotEmpty();
    OperatorProcess standby =
        await("the standby took the lease")
            .atMost(FaultLab.LEASE_DURATION.multipliedBy(3))
            .pollInterval(Duration.ofMillis(500))
            .until(
                () -> lab.liveLeader().filter(op -> !op.name().equals(leader.name())),
                java.util.Optional::isPresent)
            .orElseThrow();
    lab.awaitAllFiredOnceNotEarly(names, Duration.ofSeconds(90));

    leader.resume();
    // The woken leader may act on what it held before its lease ran out; for a good while after,
    // every task must still show exactly one firing and one Job.
    await("nothing fires twice after the old leader wakes")
        .during(Duration.ofSeconds(12))
        .atMost(Duration.ofSeconds(20))
        .pollInterval(Duration.ofSeconds(1))
        .untilAsserted(
            () ->
                FiringInvariants.assertFiredOnceNotEarly(
                    lab.client(), FaultLab.NAMESPACE, names, lab.ledger, lab.api));

    // And the pair still works: new tasks fire once, by whoever leads now.
    Instant later = Instant.now().plusSeconds(3);
    List<String> after = lab.createTasks("after-wake", 5, i -> later, false);
    lab.awaitAllFiredOnceNotEarly(after, Duration.ofSeconds(60));
    assertThat(standby.isAlive()).as("the standby that took over is still running").isTrue();
  }
}
