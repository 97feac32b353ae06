package io.delayedtask.operator.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.testing.FiringInvariants;
import io.delayedtask.operator.testing.OperatorProcess;
import io.delayedtask.operator.testing.RequiresRealKubernetes;
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
 * On the real API server: the Lease is a real coordination.k8s.io/v1 object with its
 * resourceVersion check, and a second Job creation meets the server's own AlreadyExists.
 */
@RequiresRealKubernetes
@ExtendWith(FaultLabExtension.class)
class LeaderKillIT {
  private static final Duration FIRE_TIMEOUT = Duration.ofSeconds(120);
  /** Well short of the claim lease, so only a takeover, not the lease running out, can pass. */
  private static final Duration TAKEOVER_TIMEOUT = FaultLab.CLAIM_LEASE.minusSeconds(10);

  @Test
  void standbyFiresAllOnceWhenTheLeaderIsKilledAtTheInstantTheyFallDue(FaultLab lab) {
    OperatorProcess first = lab.startOperator("op-a");
    lab.awaitLiveLeader(Duration.ofSeconds(60));
    OperatorProcess second = lab.startOperator("op-b");
    Instant due = Instant.now().plusSeconds(15);
    List<String> names = new ArrayList<>(lab.createTasks("at-due-job", 50, i -> due, true));
    names.addAll(lab.createTasks("at-due-status", 50, i -> due, false));
    lab.awaitScheduled(names, Duration.ofSeconds(60));

    FaultLab.awaitInstant(due);
    OperatorProcess leader = lab.liveLeader().orElse(first);
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
    Instant due = Instant.now().plusSeconds(12);
    List<String> names = new ArrayList<>(lab.createTasks("claimed-job", 50, i -> due, true));
    names.addAll(lab.createTasks("claimed-status", 50, i -> due, false));
    lab.awaitScheduled(names, Duration.ofSeconds(60));

    // One claim takes the whole batch (100) at once and firing it takes the leader a while (a Job
    // and a status write each): kill it as soon as Redis shows claims in flight.
    await("the leader claimed the batch").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(5))
        .until(() -> !lab.scheduleSnapshot().inFlight().isEmpty());
    Killed killed = kill(leader, lab);
    assertThat(killed.leftClaimed()).as("claimed, unfired tasks the dead leader left in Redis").isNotEmpty();

    // The dead leader's claims were made about a second before the kill with a 30 s claim lease.
    // The standby takes them over when it leads (after the 5 s Lease), so all fire well before that
    // claim lease runs out; without the takeover none could fire until then.
    lab.awaitAllFiredOnceNotEarly(names, TAKEOVER_TIMEOUT);
    assertTheStandbyFiredWhatTheLeaderLeft(lab, standby, killed);
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

  /**
   * When the leader was dead for sure, and the work it left undone: tasks still waiting or claimed
   * in Redis at its death whose status did not say fired once its last requests had landed.
   */
  private record Killed(String name, Instant deadAt, List<String> leftWaiting, List<String> leftClaimed) {
    List<String> left() {
      List<String> all = new ArrayList<>(leftWaiting);
      all.addAll(leftClaimed);
      return all;
    }
  }

  private static Killed kill(OperatorProcess leader, FaultLab lab) {
    leader.kill(); // returns once the process has exited: it sends nothing after this
    Instant deadAt = Instant.now();
    FaultLab.ScheduleSnapshot snapshot = lab.scheduleSnapshot();
    // A request the leader sent just before dying may still be applied; a second later it has been.
    // The standby cannot lead that soon: the dead leader's Lease holds for 15 s.
    FaultLab.awaitInstant(deadAt.plusSeconds(1));
    List<String> unfired = FiringInvariants.notFiredYet(lab.client(), lab.namespace, snapshot.pending());
    return new Killed(leader.name(), deadAt,
        snapshot.waiting().stream().filter(unfired::contains).toList(),
        snapshot.inFlight().stream().filter(unfired::contains).toList());
  }

  /**
   * The standby fired the batch: it holds the Lease, its log says it started firing, and every task
   * the dead leader left waiting or claimed fired after the leader had exited, so by the only live
   * operator, the standby.
   */
  private static void assertTheStandbyFiredWhatTheLeaderLeft(FaultLab lab, OperatorProcess standby, Killed killed) {
    assertThat(lab.leaseHolder()).as("the Lease after the kill of %s", killed.name()).contains(standby.name());
    assertThat(standby.log()).as("%s's log", standby.name()).contains("Starting to fire due tasks");
    List<String> left = killed.left();
    assertThat(left).as("work the dead leader left behind (else the kill proved nothing)").isNotEmpty();
    for (String name : left) {
      DelayedTask task = lab.get(name);
      assertThat(Instant.parse(task.getStatus().getFiredTime()))
          .as("%s, left by %s at its death (%s), fired by the standby %s", name, killed.name(), killed.deadAt(),
              standby.name())
          .isAfter(killed.deadAt());
    }
  }
}
