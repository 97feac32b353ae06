package io.delayedtask.operator.bench;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import io.delayedtask.operator.schedule.LuaScript;
import io.delayedtask.operator.schedule.RedisSchedule;
import io.delayedtask.operator.testing.BuildIdentity;
import io.delayedtask.operator.testing.RedisProcess;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.slf4j.LoggerFactory;

/**
 * The schedule benchmark: one real Redis, and in one run this project's schedule and poller,
 * Redisson's RDelayedQueue and the textbook ZRANGEBYSCORE + ZREM poller (every 1 s and every 100
 * ms), each under the same steady load and the same same-instant drain. Prints a Markdown table and
 * writes it with a lag chart to {@code target/benchmark/}.
 *
 * <pre>
 * mvn -B -q test-compile exec:java -Dexec.classpathScope=test \
 *     -Dexec.mainClass=io.delayedtask.operator.bench.ScheduleBenchmark
 * </pre>
 *
 * A main rather than a test (no Test/IT suffix), so {@code mvn verify} never runs it. Sizes come
 * from {@link BenchParameters}; quick run: {@code -Dbench.loadSeconds=5
 * -Dbench.drainEntries=10000}.
 */
public final class ScheduleBenchmark {
  private ScheduleBenchmark() {}

  public static void main(String[] args) throws Exception {
    // Lettuce, Netty and Redisson log at DEBUG without a configuration; the report is what matters.
    ((Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME)).setLevel(Level.WARN);
    System.setProperty("java.awt.headless", "true");
    BenchParameters parameters = BenchParameters.fromSystemProperties();

    for (String key : parameters.systems()) {
      if (!systems("redis://unused").containsKey(key)) {
        throw new IllegalArgumentException(
            "-Dbench.systems: unknown system '"
                + key
                + "'; choose from "
                + String.join(",", systems("redis://unused").keySet()));
      }
    }
    try (RedisProcess redis = RedisProcess.start();
        RedisProbe probe = new RedisProbe(redis.uri(), projectScripts());
        HiccupMeter hiccups = new HiccupMeter()) {
      Map<String, Supplier<DelayQueueUnderTest>> systems = systems(redis.uri());
      String before = machine(probe);
      SystemRun.log(before.replace("\n", " | "));
      List<SystemResult> results = new ArrayList<>();
      for (String key : parameters.systems()) {
        results.add(new SystemRun(probe, parameters, hiccups).run(systems.get(key)));
      }
      String environment = before + "\nLoad average at the end: " + loadAverage() + ".";
      String report = MarkdownReport.render(environment, parameters, results);
      System.out.println();
      System.out.println(report);
      write(
          parameters,
          results,
          report,
          probe.serverDescription().replaceAll(" \\(.*", "")
              + ", "
              + Runtime.getRuntime().availableProcessors()
              + " shared cores, load average "
              + loadAverage()
              + " at the end: tails follow machine stalls, see the hiccup column");
    }
  }

  private static Map<String, Supplier<DelayQueueUnderTest>> systems(String uri) {
    Map<String, Supplier<DelayQueueUnderTest>> systems = new LinkedHashMap<>();
    systems.put("schedule", () -> new ProjectScheduleSubject(uri));
    systems.put("redisson", () -> new RedissonDelayedQueueSubject(uri));
    systems.put("naive100ms", () -> new NaiveZsetPoller(uri, Duration.ofMillis(100)));
    systems.put("naive1s", () -> new NaiveZsetPoller(uri, Duration.ofSeconds(1)));
    return systems;
  }

  /** Names the project's scripts in the command counts: "EVALSHA claim" rather than a SHA. */
  private static Map<String, String> projectScripts() {
    return LuaScript.ALL.stream().collect(Collectors.toMap(LuaScript::sha1, LuaScript::name));
  }

  private static void write(
      BenchParameters parameters, List<SystemResult> results, String report, String chartNote)
      throws IOException {
    Path directory = Path.of(parameters.outputDirectory());
    Files.createDirectories(directory);
    Files.writeString(directory.resolve("benchmark.md"), report);
    Path chart = directory.resolve("benchmark-lag.png");
    LagChart.write(results, parameters.ratePerSecond(), chartNote, chart);
    SystemRun.log("wrote " + directory.resolve("benchmark.md") + " and " + chart);
  }

  private static String machine(RedisProbe probe) {
    return "Run "
        + Instant.now().toString().substring(0, 19)
        + "Z on "
        + cpuModel()
        + ", "
        + Runtime.getRuntime().availableProcessors()
        + " cores (shared), Java "
        + System.getProperty("java.version")
        + ", "
        + probe.serverDescription()
        + ".\nMeasured: the project's "
        + BuildIdentity.classes(RedisSchedule.class)
        + "."
        + "\nLoad average at the start: "
        + loadAverage()
        + ".";
  }

  private static String cpuModel() {
    return firstLine(
        Path.of("/proc/cpuinfo"),
        line -> line.startsWith("model name") ? line.substring(line.indexOf(':') + 1).trim() : null,
        System.getProperty("os.arch"));
  }

  private static String loadAverage() {
    return firstLine(
        Path.of("/proc/loadavg"),
        line -> String.join(" ", List.of(line.split(" ")).subList(0, 3)),
        "?");
  }

  private static String firstLine(Path file, Function<String, String> pick, String fallback) {
    try {
      for (String line : Files.readAllLines(file)) {
        String picked = pick.apply(line);
        if (picked != null) {
          return picked;
        }
      }
    } catch (IOException | RuntimeException e) {
      // Not Linux: describe the machine less precisely.
    }
    return fallback;
  }
}
