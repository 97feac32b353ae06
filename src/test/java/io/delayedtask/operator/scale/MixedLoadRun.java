package io.delayedtask.operator.scale;

import io.delayedtask.operator.testing.OperatorProcess;
import io.delayedtask.operator.testing.Ports;
import java.time.Duration;

/**
 * Scale run (not a test): one {@link MixedLoad} at a rate of your choice, for a quick look or a
 * profile of the operator under load, on each selected API server ({@link ScaleTarget}).
 *
 * <pre>
 * mvn -o package -DskipTests
 * mvn -o exec:java -Dexec.classpathScope=test -Dexec.mainClass=io.delayedtask.operator.scale.MixedLoadRun \
 *   -Doperator.jar=target/delayed-task-operator.jar [-Dtarget=mock,real] [-Drate=50] [-DdueRate=50] \
 *   [-Dseconds=30] [-DleadSeconds=2] [-DwarmupSeconds=0] \
 *   [-Doperator.jvmOptions=-XX:StartFlightRecording=filename=target/operator.jfr,settings=profile]
 * </pre>
 */
public final class MixedLoadRun {
  private MixedLoadRun() {}

  public static void main(String[] args) throws Exception {
    double rate = Double.parseDouble(System.getProperty("rate", "50"));
    double dueRate = Double.parseDouble(System.getProperty("dueRate", Double.toString(rate)));
    int seconds = Integer.getInteger("seconds", 30);
    for (String target : ScaleTarget.selected()) {
      try (OperatorScaleLab lab = new OperatorScaleLab(ScaleTarget.start(target))) {
        OperatorScaleLab.banner(
            "MixedLoadRun: created at "
                + rate
                + " per second for "
                + seconds
                + " s, due at "
                + dueRate
                + " per second",
            lab.target);
        System.out.println(
            "no operator yet: "
                + MixedLoad.floor(lab, "floor", (int) Math.round(rate * seconds), rate)
                    .floorLine());
        int port = Ports.freePort();
        try (OperatorProcess operator = lab.startOperator("mixed-op", port)) {
          System.out.printf("operator ready in %d ms%n", lab.awaitReady(operator, port));
          int warmup = Integer.getInteger("warmupSeconds", 0);
          if (warmup > 0) {
            // A fresh JVM compiles as it goes: the figures below are for an operator that has run a
            // while.
            System.out.println(
                "warm-up: "
                    + MixedLoad.run(
                            lab,
                            "warmup",
                            (int) Math.round(rate * warmup),
                            rate,
                            dueRate,
                            Duration.ofSeconds(Long.getLong("leadSeconds", 2)))
                        .line());
          }
          ProcessMeter meter = ProcessMeter.start(lab.processes(operator));
          MixedLoad.Result result =
              MixedLoad.run(
                  lab,
                  "mixed",
                  (int) Math.round(rate * seconds),
                  rate,
                  dueRate,
                  Duration.ofSeconds(Long.getLong("leadSeconds", 2)));
          meter.print("the mixed run");
          System.out.println(result.line());
          System.out.println(result.lagTable());
          // JOSDK's own timers: how long reconciles took, and how long events waited for one.
          lab.metrics(port)
              .lines()
              .filter(l -> l.startsWith("operator_sdk_") && !l.contains("_bucket"))
              .forEach(l -> System.out.println("  " + l));
        }
      }
    }
    System.exit(0);
  }
}
