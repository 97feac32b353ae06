package io.delayedtask.operator.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.DelayedTaskQueue;
import io.delayedtask.operator.api.v1alpha1.DelayedTaskQueueSpec;
import io.delayedtask.operator.testing.OperatorProcess;
import io.delayedtask.operator.testing.RequiresLoopbackOnlyNetwork;
import io.delayedtask.operator.testing.RequiresRealKubernetes;
import io.delayedtask.operator.testing.Tasks;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The leader dies with SIGKILL (no shutdown hook, its Lease and its Redis claims left behind) at
 * the worst moments: the standby takes over after the lease runs out and fires every task once, and
 * a queue's rate limit holds across the takeover. On the real API server: the Lease is a real
 * coordination.k8s.io/v1 object with its resourceVersion check, and a second Job creation meets the
 * server's own AlreadyExists.
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
    Instant due = Instant.now().plusSeconds(15);
    List<String> names = new ArrayList<>(lab.createTasks("at-due-job", 50, i -> due, true));
    names.addAll(lab.createTasks("at-due-status", 50, i -> due, false));
    lab.awaitScheduled(names, Duration.ofSeconds(60));

    FaultLab.awaitInstant(due);
    // The Lease holder, read now (never a guess: the one killed must be the leader, see kill()).
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
    Instant due = Instant.now().plusSeconds(12);
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
      // Due well after the burst is scheduled, even on a loaded machine, so the kill can catch it
      // claimed.
      Instant due = Instant.now().plusSeconds(15);
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

  /**
   * 500 tasks of a rate-limited queue fall due at once and the leader is SIGKILLed in the middle of
   * the burst: the standby's first claims take what the queue's token bucket in Redis holds, not a
   * full bucket, so over every window the queue's claims stay within {@code maxBurst + rate × its
   * length}, the takeover included; every task fires once, none early (issue 33).
   *
   * <p>A reset bucket shows only if the standby claims sooner than an empty bucket takes to fill
   * ({@code maxBurst / rate}): after that, kept or reset, it is full. After a kill the standby
   * leads once the 5 s Lease runs out, about 5 to 8 s later, so this bucket takes 10 s to fill (200
   * at 20 a second): reset, it gives the standby 200 claims at once where the kept one has refilled
   * 20 × the gap (100 to 160), and the window from the leader's first claim to the standby's first
   * exceeds the bound by the difference.
   */
  @Test
  void aQueuesBurstStaysWithinBurstPlusRateTimesTimeAcrossALeaderKilledInTheMiddle(FaultLab lab) {
    int burst = 200;
    double rate = 20;
    // Both JVMs start at once; the tasks' due time is set once one leads (at load 40 the JVMs took
    // 77 s to lead, and a due time set before that had passed long before the 500 were taken in).
    OperatorProcess first = lab.startOperator("op-a");
    OperatorProcess second = lab.startOperator("op-b");
    lab.awaitLiveLeader(Duration.ofSeconds(120));
    DelayedTaskQueue queue = new DelayedTaskQueue();
    queue.setMetadata(
        new ObjectMetaBuilder().withName("burst").withNamespace(lab.namespace).build());
    queue.setSpec(new DelayedTaskQueueSpec());
    queue.getSpec().setMaxDispatchesPerSecond(rate);
    queue.getSpec().setMaxBurst(burst);
    lab.client().resource(queue).create();
    try (QueueDispatchSamples dispatches =
        QueueDispatchSamples.start(lab.redis.uri(), lab.queueBucketKey("burst"))) {
      // Due once the leader has taken in all 500 (seconds each), with room for a loaded machine.
      Instant due = Instant.now().plusSeconds(20);
      List<String> names = createQueuedTasks(lab, "burst", 500, due);
      // Taken in late (a loaded machine), the entries reach Redis after they fall due: claimed as
      // they
      // come, within the same bound, which this test checks whatever the pace.
      lab.awaitScheduled(names, Duration.ofSeconds(120));
      if (Instant.now().isBefore(due)) {
        FaultLab.awaitInstant(due);
      }
      OperatorProcess leader = lab.awaitLiveLeader(Duration.ofSeconds(10));
      OperatorProcess standby = leader == first ? second : first;
      // In the middle: the full bucket's 200 claimed, and 50 more at the rate.
      await("the leader claimed 250 of the queue's tasks")
          .atMost(Duration.ofSeconds(60))
          .pollInterval(Duration.ofMillis(5))
          .until(() -> dispatches.dispatched() >= 250);
      Killed killed = kill(leader, lab);

      await("all 500 fired")
          .atMost(FIRE_TIMEOUT)
          .pollInterval(Duration.ofSeconds(1))
          .until(() -> notFiredYet(lab, names), List::isEmpty);
      lab.awaitAllFiredOnceNotEarly(names, FIRE_TIMEOUT);

      assertThat(lab.leaseHolder())
          .as("the Lease after the kill of %s", killed.name())
          .contains(standby.name());
      QueueDispatchSamples.Takeover takeover =
          dispatches
              .takeoverAfter(killed.deadAt())
              .orElseThrow(
                  () ->
                      new AssertionError(
                          "the standby " + standby.name() + " claimed none of the queue's tasks"));
      assertThat(takeover.lastBefore().dispatched())
          .as("claims of the queue when %s died", killed.name())
          .isBetween(250L, 450L);
      QueueDispatchSamples.Worst worst = dispatches.worstWindow(burst, rate);
      assertThat(worst.excess())
          .as(
              "claims over maxBurst + rate × t in the worst window: %d claims from %s to %s, bound %.2f (the "
                  + "takeover's gap: %s from the leader's last claim to the standby's first, at %d and %d claims)",
              worst.to().dispatched() - worst.from().dispatched(),
              worst.from().at(),
              worst.to().at(),
              worst.bound(),
              takeover.gap(),
              takeover.lastBefore().dispatched(),
              takeover.firstAfter().dispatched())
          .isLessThanOrEqualTo(0.0);
    }
  }

  /**
   * Status-only tasks of the queue {@code queue}, named {@code queue-i}, due at {@code due},
   * created 8 at a time.
   */
  private static List<String> createQueuedTasks(
      FaultLab lab, String queue, int count, Instant due) {
    List<String> names = IntStream.range(0, count).mapToObj(i -> queue + "-" + i).toList();
    ExecutorService creators = Executors.newFixedThreadPool(8);
    try {
      List<Future<DelayedTask>> created = new ArrayList<>();
      for (String name : names) {
        created.add(
            creators.submit(
                () ->
                    lab.create(
                        Tasks.task(
                            lab.namespace,
                            name,
                            spec -> {
                              spec.setRunAt(Tasks.rfc3339(due));
                              spec.setQueue(queue);
                            }))));
      }
      for (Future<DelayedTask> task : created) {
        task.get();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    } catch (ExecutionException e) {
      throw new IllegalStateException("creating the queue's tasks failed", e.getCause());
    } finally {
      creators.shutdownNow();
    }
    return names;
  }

  /**
   * Of {@code names}, those without a firedTime yet, from one list of the namespace (not a read per
   * task).
   */
  private static List<String> notFiredYet(FaultLab lab, List<String> names) {
    Set<String> fired =
        lab
            .client()
            .resources(DelayedTask.class)
            .inNamespace(lab.namespace)
            .list()
            .getItems()
            .stream()
            .filter(task -> task.getStatus() != null && task.getStatus().getFiredTime() != null)
            .map(task -> task.getMetadata().getName())
            .collect(Collectors.toSet());
    return names.stream().filter(name -> !fired.contains(name)).toList();
  }

  /**
   * When the leader was dead for sure, and what Redis still held for it then: tasks waiting, and
   * tasks it had claimed (in flight) and not acknowledged. A SIGKILLed process sends nothing more,
   * and it stamped every firedTime it sent before dying; so of these tasks, those whose firedTime
   * is after {@code deadAt} were fired by another operator. (No waiting for its last requests to
   * land: whatever lands carries its earlier firedTime.)
   */
  private record Killed(
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
  }

  private static Killed kill(OperatorProcess leader, FaultLab lab) {
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
  private static Killed killWithClaimsInFlight(
      OperatorProcess leader, FaultLab lab, List<String> batch) {
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
