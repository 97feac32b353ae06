package io.delayedtask.operator.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import io.delayedtask.operator.testing.RequiredTool;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The chart's alerts checked and unit-tested by Prometheus' own promtool (alerts_test.yaml: each
 * alert firing and quiet). An IT because it runs a Debian package's program: `mvn verify` installs
 * it at pre-integration-test (tools/install-test-packages.sh), which `mvn package` never reaches.
 */
class PrometheusRulePromtoolIT {
  private static final Path ALERTS_TEST = Path.of("src/test/resources/prometheus/alerts_test.yaml");

  private static RenderedChart chart;

  @TempDir Path dir;

  @BeforeAll
  static void render() {
    chart = MonitoringChart.render();
  }

  @Test
  void promtoolChecksTheRules() throws Exception {
    Path promtool =
        RequiredTool.find("promtool", "DELAYEDTASK_TEST_PROMTOOL", "apt-get install -y prometheus");
    Path rules = dir.resolve("rules.yaml");
    Files.writeString(rules, MonitoringChart.rulesFile(chart));
    assertThat(run(promtool.toString(), "check", "rules", rules.toString())).startsWith("exit 0");
  }

  @Test
  void promtoolUnitTestsEveryAlertFiringAndQuiet() throws Exception {
    Path promtool =
        RequiredTool.find("promtool", "DELAYEDTASK_TEST_PROMTOOL", "apt-get install -y prometheus");
    Files.writeString(dir.resolve("rules.yaml"), MonitoringChart.rulesFile(chart));
    Files.copy(ALERTS_TEST, dir.resolve("alerts_test.yaml"));
    String tests = Files.readString(ALERTS_TEST);
    for (Map<String, Object> rule : MonitoringChart.rules(chart)) {
      assertThat(tests)
          .as("alerts_test.yaml tests %s", rule.get("alert"))
          .contains("alertname: " + rule.get("alert"));
    }
    assertThat(
            run(promtool.toString(), "test", "rules", dir.resolve("alerts_test.yaml").toString()))
        .startsWith("exit 0");
  }

  /** "exit N" and the output, so that a failure shows what promtool said. */
  private static String run(String... command) throws IOException, InterruptedException {
    Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
    String output;
    try (InputStream in = process.getInputStream()) {
      output = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
    if (!process.waitFor(60, TimeUnit.SECONDS)) {
      process.destroyForcibly();
      return "timed out: " + output;
    }
    return "exit " + process.exitValue() + "\n" + output;
  }
}
