package io.delayedtask.operator.scale;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Scale run (not a test): rolling updates of two replicas, as a Deployment with {@code
 * maxUnavailable: 0} runs them, while status-only tasks fall due every 100 ms. Each rollout
 * replaces both pods one at a time: start a new pod, wait until it is ready, SIGTERM an old one
 * (waiting for it to exit), then the same for the other old pod. The old leader goes first in odd
 * rollouts and second in even ones (a Deployment picks either). For every SIGTERM of the leader it
 * prints the SIGTERM to the Lease released and to another pod holding it (as the harness's Lease
 * watch saw them), and the worst fire lag ({@code firedTime - dueTime}) of the tasks due from 1 s
 * before the SIGTERM to 5 s after; then the worst over the whole run, the lags away from any
 * handover, and the Lease's write rate (audit log). The pods run with the production Lease (4 s).
 *
 * <pre>
 * mvn -o package -DskipTests
 * mvn -o exec:java -Dexec.classpathScope=test -Dexec.mainClass=io.delayedtask.operator.scale.RollingUpdateScale \
 *   -Doperator.jar=target/delayed-task-operator.jar -Dtarget=real [-Drollouts=10]
 * </pre>
 */
public final class RollingUpdateScale {
  private static final Duration BEFORE = Duration.ofSeconds(1);
  private static final Duration AFTER = Duration.ofSeconds(5);

  private RollingUpdateScale() {}

  public static void main(String[] args) throws Exception {
    for (String target : ScaleTarget.selected()) {
      run(target);
    }
    System.exit(0);
  }

  private record Handover(
      int rollout,
      String from,
      Instant sigterm,
      long exitMs,
      Long releasedMs,
      String to,
      Long leadsMs) {}

  private static void run(String targetName) throws Exception {
    int rollouts = Integer.getInteger("rollouts", 10);
    try (OperatorScaleLab lab = new OperatorScaleLab(ScaleTarget.start(targetName));
        HandoverLab world = new HandoverLab(lab)) {
      OperatorScaleLab.banner(
          "RollingUpdateScale, "
              + rollouts
              + " rolling updates of 2 replicas, tasks due every "
              + HandoverLab.EVERY.toMillis()
              + " ms",
          lab.target);
      Instant measuredFrom = world.startTwoPodsAndStream();
      List<Handover> handovers = new ArrayList<>();
      for (int rollout = 1; rollout <= rollouts; rollout++) {
        String leader = world.awaitLiveLeader(Duration.ofSeconds(60));
        List<String> old = new ArrayList<>(world.livePods());
        old.remove(leader);
        if (rollout % 2 == 1) {
          old.add(0, leader);
        } else {
          old.add(leader);
        }
        for (String pod : old) {
          String fresh = world.startReadyPod();
          Thread.sleep(2_000); // the chart's preStop (sleep 2) before the kubelet sends SIGTERM
          String holder = world.holderNow();
          Instant sigterm = Instant.now();
          long exitMs = world.terminate(pod); // SIGTERM; returns once the process exited
          if (!holder.equals(pod)) {
            System.out.printf(
                "rollout %d: %s (standby) stopped in %d ms; new pod %s%n",
                rollout, pod, exitMs, fresh);
            continue;
          }
          String next = world.awaitLiveLeader(Duration.ofSeconds(60));
          Optional<HandoverLab.LeaseState> released = world.releasedAfter(sigterm);
          Optional<HandoverLab.LeaseState> taken =
              world.awaitLeaseHeldBy(next, sigterm, Duration.ofSeconds(5));
          Handover h =
              new Handover(
                  rollout,
                  pod,
                  sigterm,
                  exitMs,
                  released.map(s -> Duration.between(sigterm, s.seenAt()).toMillis()).orElse(null),
                  next,
                  taken.map(s -> Duration.between(sigterm, s.seenAt()).toMillis()).orElse(null));
          handovers.add(h);
          System.out.printf(
              "rollout %d: leader %s SIGTERM at %s, exited in %d ms; Lease released +%s ms, held by %s "
                  + "+%s ms (new pod %s)%n",
              rollout, pod, sigterm, exitMs, h.releasedMs(), next, h.leadsMs(), fresh);
          Thread.sleep(AFTER.toMillis()); // the window measured falls due before the next step
        }
      }
      Instant measuredTo = Instant.now();
      world.stopStreamAndAwaitFirings();
      world.printStreamTotals();

      System.out.printf(
          "%nper handover (SIGTERM of the leader): tasks due from %d s before to %d s after it%n",
          BEFORE.toSeconds(), AFTER.toSeconds());
      List<Long> worstPerHandover = new ArrayList<>();
      for (Handover h : handovers) {
        Instant from = h.sigterm().minus(BEFORE);
        Instant to = h.sigterm().plus(AFTER);
        List<Long> lags = world.lags(from, to);
        long worst = lags.isEmpty() ? -1 : lags.get(lags.size() - 1);
        worstPerHandover.add(worst);
        System.out.printf(
            "  rollout %2d %s -> %s: released +%s ms, led +%s ms; lag %s (worst %s)%n",
            h.rollout(),
            h.from(),
            h.to(),
            h.releasedMs(),
            h.leadsMs(),
            HandoverLab.ms(lags),
            world.worst(from, to).map(e -> e.getKey()).orElse("-"));
      }
      worstPerHandover.sort(null);
      List<Long> toLead =
          handovers.stream().map(Handover::leadsMs).filter(v -> v != null).sorted().toList();
      System.out.printf(
          "%nhandovers: %d; SIGTERM to another pod holding the Lease: %s%n",
          handovers.size(), HandoverLab.ms(toLead));
      System.out.printf("worst fire lag across a handover: %s%n", HandoverLab.ms(worstPerHandover));
      List<Long> all = world.lags(measuredFrom, measuredTo);
      System.out.printf("every task due during the rollouts: %s%n", HandoverLab.ms(all));
      List<Long> away = new ArrayList<>();
      for (Long lag : awayFromHandovers(world, handovers, measuredFrom, measuredTo)) {
        away.add(lag);
      }
      away.sort(null);
      System.out.printf(
          "the same away from every handover window (pods starting and standbys stopping): %s%n",
          HandoverLab.ms(away));
      world.printLeaseRequests(measuredFrom, measuredTo);
      System.out.printf(
          "pods that exited on their own and were restarted (a Lease lost under load): %d %s%n",
          world.restarts().size(), world.restarts());
    }
  }

  /** Lags of the tasks due in [from, to) outside every handover's window. */
  private static List<Long> awayFromHandovers(
      HandoverLab world, List<Handover> handovers, Instant from, Instant to) {
    List<Long> lags = new ArrayList<>();
    Instant start = from;
    for (Handover h : handovers) {
      lags.addAll(world.lags(start, h.sigterm().minus(BEFORE)));
      start = h.sigterm().plus(AFTER);
    }
    lags.addAll(world.lags(start, to));
    return lags;
  }
}
