package io.delayedtask.operator.faults;

import static io.delayedtask.operator.faults.Killed.kill;
import static io.delayedtask.operator.faults.Killed.killWithClaimsInFlight;
import static org.assertj.core.api.Assertions.assertThat;

import io.delayedtask.operator.testing.OperatorProcess;
import io.delayedtask.operator.testing.RequiresLoopbackOnlyNetwork;
import io.delayedtask.operator.testing.RequiresRealKubernetes;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The leader dies with SIGKILL (no shutdown hook, its Lease and its Redis claims left behind) at
 * the worst moments: the standby takes over after the lease runs out and fires every task once. On
 * the real API server: the Lease is a real coordination.k8s.io/v1 object with its resourceVersion
 * check, and a second Job creation meets the server's own AlreadyExists. ({@link
 * RepeatedLeaderKillIT} kills leader after leader while tasks keep falling due, and {@link
 * QueueLeaderKillIT} kills one in the middle of a queue's burst: classes of their own, so that
 * failsafe's JVMs share the kills' minutes.)
 */
@RequiresRealKubernetes
@ExtendWith(FaultLabExtension.class)
@RequiresLoopbackOnlyNetwork
class LeaderKillIT {
  private static final Duration FIRE_TIMEOUT = Duration.ofSeconds(120);

  /** Well short of the claim lease, so only a takeover, not the lease running out, can pass. */
  private static final Duration TAKEOVER_TIMEOUT = FaultLab.CLAIM_LEASE.minusSeconds(10);

  @Test
  void standbyFiresAllOnceWhenTheLeaderIsKilledAtTheInstantTheyFallDue(FaultLab lab) {
    OperatorProcess first = lab.startOperator("op-a");
    lab.awaitLiveLeader(Duration.ofSeconds(60));
    OperatorProcess second = lab.startOperator("op-b");
    // After the 100 are scheduled (about 3 s beside another test JVM) and op-b has started.
    Instant due = Instant.now().plusSeconds(10);
    List<String> names = new ArrayList<>(lab.createTasks("at-due-job", 50, i -> due, true));
    names.addAll(lab.createTasks("at-due-status", 50, i -> due, false));
    lab.awaitScheduled(names, Duration.ofSeconds(60));

    FaultLab.awaitInstant(due);
    // The Lease holder, read now (never a guess: the one killed must be the leader, see
    // Killed.kill).
    OperatorProcess leader = lab.awaitLiveLeader(Duration.ofSeconds(10));
    OperatorProcess standby = leader == first ? second : first;
    Killed killed = kill(leader, lab);

    lab.awaitAllFiredOnceNotEarly(names, FIRE_TIMEOUT);
    assertTheStandbyFiredWhatTheLeaderLeft(lab, standby, killed);
  }

  @Test
  void standbyFiresAllOnceWhenTheLeaderIsKilledRightAfterClaiming(FaultLab lab) {
    lab.startOperator("op-a");
    OperatorProcess leader = lab.awaitLiveLeader(Duration.ofSeconds(60));
    OperatorProcess standby = lab.startOperator("op-b");
    Instant due = Instant.now().plusSeconds(8); // after the 100 are scheduled, about 3 s
    List<String> names = new ArrayList<>(lab.createTasks("claimed-job", 50, i -> due, true));
    names.addAll(lab.createTasks("claimed-status", 50, i -> due, false));
    lab.awaitScheduled(names, Duration.ofSeconds(60));

    // One claim takes the whole batch (100) at once and firing it takes the leader a while (a Job
    // and a status write each): kill it as soon as Redis shows claims in flight.
    Killed killed = killWithClaimsInFlight(leader, lab, names);

    // The dead leader's claims were made about a second before the kill with a 30 s claim lease.
    // The standby takes them over when it leads (after the 5 s Lease), so all fire well before that
    // claim lease runs out; without the takeover none could fire until then.
    lab.awaitAllFiredOnceNotEarly(names, TAKEOVER_TIMEOUT);
    assertTheStandbyFiredWhatTheLeaderLeft(lab, standby, killed);
    assertThat(killed.firedAfterDeath(lab, killed.claimedAtDeath()))
        .as("tasks %s held claimed at its death, fired by the standby", killed.name())
        .isNotEmpty();
  }

  /**
   * The standby fired what the dead leader left: it holds the Lease, its log says it started
   * firing, and of the tasks Redis held for the leader at its death some fired after it (so by the
   * standby, the only live operator); else the kill proved nothing.
   */
  private static void assertTheStandbyFiredWhatTheLeaderLeft(
      FaultLab lab, OperatorProcess standby, Killed killed) {
    assertThat(lab.leaseHolder())
        .as("the Lease after the kill of %s", killed.name())
        .contains(standby.name());
    assertThat(standby.log()).as("%s's log", standby.name()).contains("Starting to fire due tasks");
    assertThat(killed.firedAfterDeath(lab, killed.pendingAtDeath()))
        .as(
            "tasks %s left at its death (%s), fired after it by the standby %s",
            killed.name(), killed.deadAt(), standby.name())
        .isNotEmpty();
  }
}
