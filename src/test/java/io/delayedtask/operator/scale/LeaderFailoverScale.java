package io.delayedtask.operator.scale;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;

/**
 * Scale run (not a test): the leader of two replicas SIGKILLed {@code -Dkills} times with the
 * production Lease (4 s, nothing set), while status-only tasks fall due every 100 ms. Each round
 * waits until both pods are ready and one leads, waits a random 0-2 s (so the kill lands anywhere
 * in the renewal cycle), SIGKILLs the leader, then measures from the kill: the standby holding the
 * Lease (its {@code acquireTime}, and when the harness's watch saw it), the next firing (the
 * earliest {@code firedTime} after the kill) and the worst fire lag of the tasks due in the 6 s
 * after it. Then a replacement pod starts, as the Deployment's would, and the next round begins
 * once it is ready. Prints each round, p50/p99/max of each figure and the Lease's write rate over
 * the whole run (audit log).
 *
 * <pre>
 * mvn -o package -DskipTests
 * mvn -o exec:java -Dexec.classpathScope=test -Dexec.mainClass=io.delayedtask.operator.scale.LeaderFailoverScale \
 *   -Doperator.jar=target/delayed-task-operator.jar -Dtarget=real [-Dkills=100] [-Dseed=35] [-Dminutes=60]
 * </pre>
 */
public final class LeaderFailoverScale {
  private static final Duration WINDOW = Duration.ofSeconds(6);

  private LeaderFailoverScale() {}

  public static void main(String[] args) throws Exception {
    for (String target : ScaleTarget.selected()) {
      run(target);
    }
    System.exit(0);
  }

  private static void run(String targetName) throws Exception {
    int kills = Integer.getInteger("kills", 100);
    // A time budget: on a starved machine each replacement pod takes long to be ready.
    Instant giveUpAt = Instant.now().plus(Duration.ofMinutes(Long.getLong("minutes", 60)));
    Random random = new Random(Long.getLong("seed", 35));
    try (OperatorScaleLab lab = new OperatorScaleLab(ScaleTarget.start(targetName));
        HandoverLab world = new HandoverLab(lab)) {
      OperatorScaleLab.banner(
          "LeaderFailoverScale, "
              + kills
              + " SIGKILLs of the leader of 2 replicas, tasks due every "
              + HandoverLab.EVERY.toMillis()
              + " ms",
          lab.target);
      Instant measuredFrom = world.startTwoPodsAndStream();
      List<Long> toAcquire = new ArrayList<>();
      List<Long> toSeen = new ArrayList<>();
      List<Long> toFiring = new ArrayList<>();
      List<Long> worstLags = new ArrayList<>();
      List<Instant> killedAt = new ArrayList<>();
      int lost = 0;
      int round = 1;
      for (; round <= kills && Instant.now().isBefore(giveUpAt); round++) {
        String leader = world.awaitLiveLeader(Duration.ofSeconds(60));
        String standby =
            world.livePods().stream().filter(p -> !p.equals(leader)).findFirst().orElseThrow();
        world.awaitReady(standby);
        Thread.sleep(random.nextInt(2_000)); // anywhere in the leader's 1.2 s renewal cycle
        Instant kill = Instant.now();
        world.kill(leader); // SIGKILL; returns once the process is gone
        killedAt.add(kill);
        Optional<HandoverLab.LeaseState> taken =
            world.awaitLeaseHeldBy(standby, kill, Duration.ofSeconds(30));
        Optional<Instant> firing = world.awaitFiringAfter(kill, Duration.ofSeconds(30));
        if (taken.isEmpty() || firing.isEmpty()) {
          lost++;
          System.out.printf(
              "round %3d: killed %s at %s; standby %s leading: %s, next firing: %s%n",
              round, leader, kill, standby, taken.isPresent(), firing.orElse(null));
        } else {
          long acquire =
              taken.get().acquireTime() == null
                  ? -1
                  : Duration.between(kill, taken.get().acquireTime()).toMillis();
          long seen = Duration.between(kill, taken.get().seenAt()).toMillis();
          long next = Duration.between(kill, firing.get()).toMillis();
          toAcquire.add(acquire);
          toSeen.add(seen);
          toFiring.add(next);
          System.out.printf(
              "round %3d: killed %s; %s acquired the Lease +%d ms (watch +%d ms), next firing +%d ms%n",
              round, leader, standby, acquire, seen, next);
        }
        world.startReadyPod(); // the Deployment's replacement
      }
      Thread.sleep(WINDOW.toMillis()); // the last window falls due
      Instant measuredTo = Instant.now();
      world.stopStreamAndAwaitFirings();
      world.printStreamTotals();
      for (Instant kill : killedAt) {
        List<Long> lags = world.lags(kill, kill.plus(WINDOW));
        if (!lags.isEmpty()) {
          worstLags.add(lags.get(lags.size() - 1));
        }
      }
      toAcquire.sort(null);
      toSeen.sort(null);
      toFiring.sort(null);
      worstLags.sort(null);
      System.out.printf(
          "%n%d kills%s, %d without a takeover measured%n",
          round - 1,
          round - 1 < kills ? " (of " + kills + ": the -Dminutes budget ran out)" : "",
          lost);
      System.out.printf(
          "kill to the standby's acquireTime:           %s%n", HandoverLab.ms(toAcquire));
      System.out.printf(
          "kill to the harness's watch seeing it lead:  %s%n", HandoverLab.ms(toSeen));
      System.out.printf(
          "kill to the next firing (firedTime):         %s%n", HandoverLab.ms(toFiring));
      System.out.printf(
          "worst fire lag of the tasks due in the %d s after a kill, per kill: %s%n",
          WINDOW.toSeconds(), HandoverLab.ms(worstLags));
      System.out.printf(
          "every task due during the run: %s%n",
          HandoverLab.ms(world.lags(measuredFrom, measuredTo)));
      world.printLeaseRequests(measuredFrom, measuredTo);
      System.out.printf(
          "pods that exited on their own and were restarted (a Lease lost under load): %d %s%n",
          world.restarts().size(), world.restarts());
    }
  }
}
