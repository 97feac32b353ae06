package io.delayedtask.operator.scale;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.Phase;
import io.delayedtask.operator.testing.OperatorProcess;
import io.delayedtask.operator.testing.Ports;
import io.delayedtask.operator.testing.Tasks;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.batch.v1.JobTemplateSpec;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Scale run (not a test): 2,000 DelayedTasks at the largest spec, each with a payload of 64 values
 * and a 100 KiB jobTemplate, against the operator at its default memory limit: the image's JVM
 * options ({@code -XX:MaxRAMPercentage=60.0 -XX:+ExitOnOutOfMemoryError}) on a machine of the
 * chart's default limits, 512Mi and one CPU ({@code -XX:MaxRAM}, {@code -XX:ActiveProcessorCount}).
 * Prints, for an operator that follows the tasks as they are created and then for one started
 * afterwards (which lists them all), whether it lived, its heap in use, its live set after a full
 * GC and its peak resident memory; a share of the tasks fall due during the creation, so their Jobs
 * are created from the whole spec. With {@code -Dbaseline.jar=...} the same restart for another
 * build, side by side.
 *
 * <p>The payload values are 4,000 characters, not the CRD's 4,096: the Job carries the payload as
 * annotations, which the API server limits to 256 KiB together with their keys, so 64 values of
 * 4,096 characters make a Job task that its dry run finds Invalid.
 *
 * <pre>
 * mvn -o package -DskipTests
 * MAVEN_OPTS=-Xmx2g mvn -o exec:java -Dexec.classpathScope=test \
 *   -Dexec.mainClass=io.delayedtask.operator.scale.LargeTasksScale \
 *   -Doperator.jar=target/delayed-task-operator.jar [-Dtasks=2000] [-Dfiring=100] [-Dbaseline.jar=...]
 * </pre>
 */
public final class LargeTasksScale {
  private static final String NS = OperatorScaleLab.NAMESPACE;

  /**
   * What the image runs with (-Dheap.percent to try another share), in a container of the chart's
   * default limits: 512Mi and one CPU, which makes the JVM choose its serial collector.
   */
  private static final List<String> DEFAULT_LIMIT_JVM =
      jvm(System.getProperty("heap.percent", "60.0"));

  private static final int PAYLOAD_KEYS = 64;
  private static final int PAYLOAD_VALUE_CHARS = 4000;
  private static final int TEMPLATE_FILLER_CHARS = 100 * 1024;

  private LargeTasksScale() {}

  public static void main(String[] args) throws Exception {
    int count = Integer.getInteger("tasks", 2000);
    int firing = Integer.getInteger("firing", 100);
    try (OperatorScaleLab lab = new OperatorScaleLab(ScaleTarget.start("real"))) {
      OperatorScaleLab.banner(
          "LargeTasksScale, "
              + count
              + " tasks of "
              + (PAYLOAD_KEYS * PAYLOAD_VALUE_CHARS + TEMPLATE_FILLER_CHARS) / 1024
              + " KiB, "
              + firing
              + " of them due during the run; JVM "
              + DEFAULT_LIMIT_JVM,
          lab.target);
      Map<String, String> payload = payload();
      JobTemplateSpec template = template();
      RedisClient redis = RedisClient.create(lab.redis.uri());
      try (StatefulRedisConnection<String, String> connection = redis.connect()) {
        String dueKey = new io.delayedtask.operator.schedule.ScheduleKeys("delayedtask", 1).due(0);
        int port = Ports.freePort();
        OperatorProcess following =
            lab.startOperator(
                "large-follow", port, OperatorProcess.jar(), Map.of(), DEFAULT_LIMIT_JVM);
        lab.awaitReady(following, port);
        int pending = count - firing;
        long createMs =
            lab.createAll(
                count,
                OperatorScaleLab.createThreads(),
                i ->
                    Tasks.task(
                        NS,
                        "large-" + i,
                        s -> {
                          // The last ones fall due 20 s after they are created: during the creation
                          // of the rest, or just after.
                          if (i >= pending) {
                            s.setDelay("20s");
                          } else {
                            s.setRunAt("2099-01-01T00:00:00Z");
                          }
                          s.setPayload(payload);
                          s.setJobTemplate(template);
                        }));
        System.out.printf("created %,d tasks in %,d ms%n", count, createMs);
        long waitStart = System.nanoTime();
        while (connection.sync().zcard(dueKey) < pending || running(lab, pending, count) < firing) {
          if (!following.isAlive()) {
            System.out.println("the operator died; its log ends:\n" + tail(following.log()));
            break;
          }
          if (System.nanoTime() - waitStart > 900_000_000_000L) {
            System.out.printf(
                "WARNING: after 900 s: %,d entries, %,d of %,d due tasks Running; going on%n",
                connection.sync().zcard(dueKey), running(lab, pending, count), firing);
            break;
          }
          Thread.sleep(2_000); // a measuring loop, not a test: each check reads the due tasks
        }
        report(
            "operator following the creation",
            lab,
            following,
            port,
            connection.sync().zcard(dueKey),
            running(lab, pending, count));
        following.kill();

        measureRestart(
            lab,
            "restarted operator (lists every task)",
            OperatorProcess.jar(),
            DEFAULT_LIMIT_JVM,
            pending,
            count,
            connection,
            dueKey);
        // -Dalso.heap.percent=60: the same restart with another heap share, to compare resident
        // peaks.
        String other = System.getProperty("also.heap.percent");
        if (other != null) {
          measureRestart(
              lab,
              "restarted operator, heap " + other + "%",
              OperatorProcess.jar(),
              jvm(other),
              pending,
              count,
              connection,
              dueKey);
        }
        String baseline = System.getProperty("baseline.jar");
        if (baseline != null && Files.exists(Path.of(baseline))) {
          measureRestart(
              lab,
              "baseline " + baseline + " restarted",
              Path.of(baseline),
              DEFAULT_LIMIT_JVM,
              pending,
              count,
              connection,
              dueKey);
        }
      } finally {
        redis.shutdown();
      }
    }
    System.exit(0);
  }

  private static List<String> jvm(String heapPercent) {
    return List.of(
        "-XX:MaxRAM=512m",
        "-XX:ActiveProcessorCount=1",
        "-XX:MaxRAMPercentage=" + heapPercent,
        "-XX:+ExitOnOutOfMemoryError");
  }

  private static void measureRestart(
      OperatorScaleLab lab,
      String what,
      Path jar,
      List<String> jvm,
      int pending,
      int count,
      StatefulRedisConnection<String, String> connection,
      String dueKey)
      throws Exception {
    connection.sync().flushall(); // the restart rebuilds the schedule from the tasks it lists
    int port = Ports.freePort();
    long start = System.nanoTime();
    try (OperatorProcess restarted = lab.startOperator("large-restart", port, jar, Map.of(), jvm)) {
      while (restarted.isAlive()
          && (!lab.ready(port) || connection.sync().zcard(dueKey) < pending)) {
        if (System.nanoTime() - start > 600_000_000_000L) {
          System.out.println("WARNING: not ready with a full schedule after 600 s");
          break;
        }
        Thread.sleep(500); // a measuring loop, not a test
      }
      if (restarted.isAlive()) {
        System.out.printf(
            "%s: ready with all %,d entries after %,d ms%n",
            what, pending, (System.nanoTime() - start) / 1_000_000);
      }
      report(
          what,
          lab,
          restarted,
          port,
          connection.sync().zcard(dueKey),
          running(lab, pending, count));
    }
  }

  private static void report(
      String what,
      OperatorScaleLab lab,
      OperatorProcess operator,
      int port,
      long entries,
      int running)
      throws Exception {
    String peak = residentPeakMb(operator.pid());
    long heapMb;
    try {
      heapMb = operator.isAlive() ? lab.heapUsedBytes(port) / (1024 * 1024) : -1;
    } catch (java.io.IOException e) {
      heapMb = -1; // it died between the two calls
    }
    if (heapMb < 0) {
      System.out.printf(
          "%s: DIED (exit %s), peak resident %s MB, %,d entries, %,d due tasks Running; log ends:%n%s%n",
          what,
          operator.waitForExit(java.time.Duration.ofSeconds(5)),
          peak,
          entries,
          running,
          tail(operator.log()));
      return;
    }
    System.out.printf(
        "%s: alive; heap in use %,d MB, live after a full GC %s, peak resident %s MB (limit 512), "
            + "%,d entries, %,d due tasks Running%n",
        what, heapMb, LiveHeap.megabytes(operator.pid()), peak, entries, running);
  }

  /**
   * The due tasks whose status says Running (their Job created), read one by one (each is large).
   */
  private static int running(OperatorScaleLab lab, int from, int to) {
    int running = 0;
    for (int i = from; i < to; i++) {
      DelayedTask task =
          lab.client().resources(DelayedTask.class).inNamespace(NS).withName("large-" + i).get();
      if (task != null
          && task.getStatus() != null
          && task.getStatus().getPhase() == Phase.Running) {
        running++;
      }
    }
    return running;
  }

  private static Map<String, String> payload() {
    Map<String, String> payload = new TreeMap<>();
    for (int i = 0; i < PAYLOAD_KEYS; i++) {
      payload.put("k" + i, Character.toString('a' + i % 26).repeat(PAYLOAD_VALUE_CHARS));
    }
    return payload;
  }

  private static JobTemplateSpec template() {
    JobTemplateSpec template = Tasks.busyboxJob();
    template
        .getSpec()
        .getTemplate()
        .getSpec()
        .getContainers()
        .get(0)
        .setEnv(
            new ArrayList<>(
                List.of(new EnvVar("FILLER", "f".repeat(TEMPLATE_FILLER_CHARS), null))));
    return template;
  }

  /** Peak resident set (VmHWM) of a live process, from /proc. */
  private static String residentPeakMb(long pid) {
    try {
      for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
        if (line.startsWith("VmHWM:")) {
          return Long.toString(Long.parseLong(line.replaceAll("\\D", "")) / 1024);
        }
      }
    } catch (java.io.IOException | RuntimeException e) {
      return "?";
    }
    return "?";
  }

  private static String tail(String log) {
    String[] lines = log.split("\n");
    return String.join(
        "\n", java.util.Arrays.copyOfRange(lines, Math.max(0, lines.length - 15), lines.length));
  }
}
