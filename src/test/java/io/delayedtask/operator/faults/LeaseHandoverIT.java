package io.delayedtask.operator.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.delayedtask.operator.testing.OperatorProcess;
import io.delayedtask.operator.testing.RequiresLoopbackOnlyNetwork;
import io.delayedtask.operator.testing.RequiresRealKubernetes;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The Lease handed over with the default settings, as a user's cluster sees it: a leader stopped
 * with SIGTERM (a rolling update) releases the Lease and the standby fires without waiting it out;
 * a leader SIGKILLed (a lost node) costs at most 5 s of firing. Tasks fall due every 100 ms
 * throughout. (Apart from {@link LeaderKillIT}, whose kills at the worst moments prove nothing is
 * lost: the two classes run side by side in failsafe's JVMs.)
 */
@RequiresRealKubernetes
@ExtendWith(FaultLabExtension.class)
@RequiresLoopbackOnlyNetwork
class LeaseHandoverIT {
  private static final Duration FIRE_TIMEOUT = Duration.ofSeconds(120);

  /**
   * A rolling update, as a Deployment runs it: the new pod is ready, then the leader gets SIGTERM.
   * It stops claiming, lets its claims settle, stops and releases the Lease; the standby, nudged by
   * the released Lease, fires without waiting the Lease out. Tasks fall due every 100 ms
   * throughout.
   */
  @Test
  void sigtermReleasesTheLeaseAndTheStandbyFiresWithoutWaitingItOut(FaultLab lab) {
    lab.startOperatorWithDefaultLease("op-a");
    OperatorProcess leader = lab.awaitLiveLeader(Duration.ofSeconds(60));
    OperatorProcess standby = lab.startOperatorWithDefaultLease("op-b");
    await("the standby is ready").atMost(Duration.ofSeconds(60)).until(standby::ready);
    // Every task created well before its due time (100 take about 2 s beside another test JVM):
    // one created late would fire late, and read as the handover's lag.
    Instant start = Instant.now().plusSeconds(10);
    List<String> names = lab.createTasks("rolling", 80, i -> start.plusMillis(100L * i), false);
    LeaseLog lease = LeaseLog.watch(lab);

    FaultLab.awaitInstant(start.plusSeconds(3));
    int transitions = lease.transitions();
    Instant sigterm = Instant.now();
    leader.terminate();
    assertThat(leader.log()).contains("Released the leader Lease");

    lab.awaitAllFiredOnceNotEarly(names, FIRE_TIMEOUT);
    lease.close();
    assertThat(lease.holders())
        .as("holders the Lease showed after SIGTERM, in order")
        .containsSubsequence("op-a", "", "op-b");
    assertThat(lease.transitions()).isEqualTo(transitions + 1);
    assertThat(lease.writesPerSecondWhileOneLed(sigterm))
        .as("Lease writes a second while op-a led")
        .isLessThan(1.0);
    // How fast a handover is, is the rolling-update benchmark's to say, on a quiet machine
    // (docs/performance.md: the standby holds the Lease within 0.52 s of the SIGTERM). Here, beside
    // two other test JVMs on 2 cores (1.17 s was seen), the bound tells a released Lease from one
    // waited out: a dead leader's runs out 2.8-4 s later.
    assertThat(worstLag(lab, names, sigterm))
        .as("the worst fire lag of the tasks due after the SIGTERM")
        .isLessThan(Duration.ofSeconds(2));
  }

  /**
   * A leader SIGKILLed with the default Lease costs at most 5 s of firing: the standby takes over
   * as it runs out.
   */
  @Test
  void sigkillWithTheDefaultLeaseCostsAtMostFiveSecondsOfFiring(FaultLab lab) {
    lab.startOperatorWithDefaultLease("op-a");
    OperatorProcess leader = lab.awaitLiveLeader(Duration.ofSeconds(60));
    OperatorProcess standby = lab.startOperatorWithDefaultLease("op-b");
    await("the standby is ready").atMost(Duration.ofSeconds(60)).until(standby::ready);
    Instant start = Instant.now().plusSeconds(10); // as in the SIGTERM test
    List<String> names = lab.createTasks("killed", 100, i -> start.plusMillis(100L * i), false);

    FaultLab.awaitInstant(start.plusSeconds(2));
    leader.kill(); // returns once the process has exited: it sends nothing after this
    Instant deadAt = Instant.now();

    lab.awaitAllFiredOnceNotEarly(names, FIRE_TIMEOUT);
    assertThat(lab.leaseHolder()).contains(standby.name());
    assertThat(worstLag(lab, names, deadAt))
        .as("the worst fire lag of the tasks due after the SIGKILL")
        .isLessThanOrEqualTo(Duration.ofSeconds(5));
  }

  /** The largest firedTime - due of the named tasks due after {@code from} (all fired). */
  private static Duration worstLag(FaultLab lab, List<String> names, Instant from) {
    return names.stream()
        .map(lab::get)
        .filter(task -> Instant.parse(task.getStatus().getDueTime()).isAfter(from))
        .map(
            task ->
                Duration.between(
                    Instant.parse(task.getStatus().getDueTime()),
                    Instant.parse(task.getStatus().getFiredTime())))
        .max(Duration::compareTo)
        .orElseThrow();
  }

  /** Every state of the lab's Lease from now on, as a watch delivers it. */
  private static final class LeaseLog implements AutoCloseable {
    private record Seen(Instant at, String holder, int transitions) {}

    private final List<Seen> seen = new CopyOnWriteArrayList<>();
    private Watch watch;

    static LeaseLog watch(FaultLab lab) {
      LeaseLog log = new LeaseLog();
      log.watch =
          lab.client()
              .leases()
              .inNamespace(lab.namespace)
              .withName(FaultLab.LEASE_NAME)
              .watch(
                  new Watcher<>() {
                    @Override
                    public void eventReceived(Action action, Lease lease) {
                      String holder = lease.getSpec().getHolderIdentity();
                      Integer transitions = lease.getSpec().getLeaseTransitions();
                      log.seen.add(
                          new Seen(
                              Instant.now(),
                              holder == null ? "" : holder,
                              transitions == null ? 0 : transitions));
                    }

                    @Override
                    public void onClose(WatcherException cause) {}
                  });
      await("the Lease watch's first state")
          .atMost(Duration.ofSeconds(10))
          .until(() -> !log.seen.isEmpty());
      return log;
    }

    /** The holders seen, each change once. */
    List<String> holders() {
      List<String> holders = new ArrayList<>();
      for (Seen s : seen) {
        if (holders.isEmpty() || !holders.get(holders.size() - 1).equals(s.holder())) {
          holders.add(s.holder());
        }
      }
      return holders;
    }

    int transitions() {
      return seen.get(seen.size() - 1).transitions();
    }

    /** Writes (states seen after the first) per second before {@code until}. */
    double writesPerSecondWhileOneLed(Instant until) {
      List<Seen> before = seen.stream().filter(s -> s.at().isBefore(until)).toList();
      double seconds = Duration.between(before.get(0).at(), until).toMillis() / 1000.0;
      return (before.size() - 1) / seconds;
    }

    @Override
    public void close() {
      watch.close();
    }
  }
}
