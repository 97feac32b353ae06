package io.delayedtask.operator.faults;

import static io.delayedtask.operator.faults.Killed.killWithClaimsInFlight;
import static org.assertj.core.api.Assertions.assertThat;

import io.delayedtask.operator.testing.OperatorProcess;
import io.delayedtask.operator.testing.RequiresLoopbackOnlyNetwork;
import io.delayedtask.operator.testing.RequiresRealKubernetes;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Leader after leader dies with SIGKILL while tasks keep falling due, with 2 and 3 replicas and a
 * replacement started after each kill (as a Deployment would): each kill lands while the leader
 * holds claims, and another operator fires every task once, none early. On the real API server, as
 * {@link LeaderKillIT}.
 */
@RequiresRealKubernetes
@ExtendWith(FaultLabExtension.class)
@RequiresLoopbackOnlyNetwork
class RepeatedLeaderKillIT {
  private static final Duration FIRE_TIMEOUT = Duration.ofSeconds(120);

  @ParameterizedTest(name = "{0} replicas")
  @ValueSource(ints = {2, 3})
  void repeatedLeaderKillsWhileTasksKeepFallingDue(int replicas, FaultLab lab) {
    for (int i = 0; i < replicas; i++) {
      lab.startOperator("op-" + i);
    }
    lab.awaitLiveLeader(Duration.ofSeconds(60));
    Instant start = Instant.now().plusSeconds(8);
    // A stream of 40 tasks falling due one every half second, half with Jobs, across the kills.
    List<String> names =
        new ArrayList<>(lab.createTasks("stream-job", 20, i -> start.plusMillis(1_000L * i), true));
    names.addAll(
        lab.createTasks("stream-status", 20, i -> start.plusMillis(500L + 1_000L * i), false));

    // Each kill lands while the leader holds claims: a burst falling due at once is claimed in one
    // go and takes the leader a while to fire, and the kill waits until Redis shows it in flight.
    for (int round = 0; round < 2; round++) {
      OperatorProcess leader = lab.awaitLiveLeader(Duration.ofSeconds(60));
      // Due after the burst is scheduled (about 2 s for its 50 tasks beside another test JVM), so
      // one claim takes it; taken in late, it is claimed as it comes and the kill still waits for a
      // claim in flight.
      Instant due = Instant.now().plusSeconds(8);
      List<String> burst =
          new ArrayList<>(lab.createTasks("burst" + round + "-job", 25, i -> due, true));
      burst.addAll(lab.createTasks("burst" + round + "-status", 25, i -> due, false));
      lab.awaitScheduled(burst, Duration.ofSeconds(60));
      names.addAll(burst);
      Killed killed = killWithClaimsInFlight(leader, lab, burst);
      lab.startOperator("op-r" + round); // the Deployment brings a replacement pod
      lab.awaitAllFiredOnceNotEarly(burst, FIRE_TIMEOUT);
      assertThat(killed.firedAfterDeath(lab, killed.claimedAtDeath()))
          .as("burst tasks %s held claimed at its death, fired after it by another", killed.name())
          .isNotEmpty();
    }

    lab.awaitAllFiredOnceNotEarly(names, FIRE_TIMEOUT);
    assertThat(lab.liveLeader()).isPresent();
  }
}
