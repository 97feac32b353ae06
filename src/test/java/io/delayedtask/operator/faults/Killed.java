package io.delayedtask.operator.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.delayedtask.operator.testing.OperatorProcess;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A leader killed with SIGKILL by a fault test ({@link LeaderKillIT}, {@link RepeatedLeaderKillIT},
 * {@link QueueLeaderKillIT}): when it was dead for sure, and what Redis still held for it then:
 * tasks waiting, and tasks it had claimed (in flight) and not acknowledged. A SIGKILLed process
 * sends nothing more, and it stamped every firedTime it sent before dying; so of these tasks, those
 * whose firedTime is after {@code deadAt} were fired by another operator. (No waiting for its last
 * requests to land: whatever lands carries its earlier firedTime.)
 */
record Killed(
    String name, Instant deadAt, List<String> waitingAtDeath, List<String> claimedAtDeath) {
  List<String> pendingAtDeath() {
    List<String> all = new ArrayList<>(waitingAtDeath);
    all.addAll(claimedAtDeath);
    return all;
  }

  /** Those of {@code names} (all fired by now) whose firedTime is after the death. */
  List<String> firedAfterDeath(FaultLab lab, List<String> names) {
    return names.stream()
        .filter(name -> Instant.parse(lab.get(name).getStatus().getFiredTime()).isAfter(deadAt))
        .toList();
  }

  static Killed kill(OperatorProcess leader, FaultLab lab) {
    leader.kill(); // returns once the process has exited: it sends nothing after this
    Instant deadAt = Instant.now();
    // The process killed was the one that leads (so the claims were its own), never the standby: a
    // dead leader's Lease names it until the Lease runs out, seconds after this read; had the
    // standby been killed, the Lease would name the live leader. (Nobody but the dead leader could
    // have changed the schedule before the Lease runs out either, so the snapshot after it holds.)
    Optional<String> holder = lab.leaseHolder();
    FaultLab.ScheduleSnapshot snapshot = lab.scheduleSnapshot();
    assertThat(holder).as("the Lease right after the kill").contains(leader.name());
    return new Killed(leader.name(), deadAt, snapshot.waiting(), snapshot.inFlight());
  }

  /**
   * Kills the leader as soon as Redis shows it holding claims on any of {@code batch}, and checks
   * it still held some at its death; what the returned value lists is of the batch only.
   */
  static Killed killWithClaimsInFlight(OperatorProcess leader, FaultLab lab, List<String> batch) {
    await("the leader claimed the batch")
        .atMost(Duration.ofSeconds(30))
        .pollInterval(Duration.ofMillis(5))
        .until(() -> lab.scheduleSnapshot().inFlight().stream().anyMatch(batch::contains));
    // Killed at once: a read of the Lease first gave the leader time to fire the whole batch.
    Killed all = kill(leader, lab);
    Killed killed =
        new Killed(
            all.name(),
            all.deadAt(),
            all.waitingAtDeath().stream().filter(batch::contains).toList(),
            all.claimedAtDeath().stream().filter(batch::contains).toList());
    assertThat(killed.claimedAtDeath())
        .as("claims %s held in Redis at its death", killed.name())
        .isNotEmpty();
    return killed;
  }
}
