package io.delayedtask.operator.gitops;

import static io.delayedtask.operator.gitops.ArgoCdLua.DELAYED_TASK;
import static org.assertj.core.api.Assertions.assertThat;

import io.delayedtask.operator.api.v1alpha1.Phase;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * Runs health.lua against every fixture of health_test.yaml (Argo CD's own test layout), so the
 * fixtures are the table of expected health, and checks that the table covers every phase.
 */
class ArgoCdHealthTest {

  private static final Path HEALTH = DELAYED_TASK.resolve("health.lua");

  /** What Argo CD accepts from a health script; anything else it shows as Unknown. */
  private static final List<String> ARGO_CD_STATUSES =
      List.of("Healthy", "Progressing", "Degraded", "Suspended", "Missing", "Unknown");

  @TestFactory
  Stream<DynamicTest> eachFixtureHasTheHealthItsTestNames() {
    return cases().stream()
        .map(
            c ->
                DynamicTest.dynamicTest(
                    c.inputPath(),
                    () -> {
                      Object health =
                          ArgoCdLua.run(
                              HEALTH, ArgoCdLua.yamlFile(DELAYED_TASK.resolve(c.inputPath())));
                      assertThat(health).as(c.inputPath()).isEqualTo(c.healthStatus());
                      assertThat(((Map<?, ?>) health).get("status"))
                          .as("a status Argo CD accepts")
                          .isIn(ARGO_CD_STATUSES);
                    }));
  }

  @Test
  void theFixturesCoverEveryPhase() {
    List<Object> phases =
        cases().stream()
            .map(c -> status(ArgoCdLua.yamlFile(DELAYED_TASK.resolve(c.inputPath()))).get("phase"))
            .toList();
    assertThat(phases).containsAll(Arrays.stream(Phase.values()).map(Phase::name).toList());
  }

  @Test
  void theHealthOfEachPhaseIsTheContractsTable() {
    Map<String, String> expected =
        Map.of(
            "Scheduled",
            "Healthy",
            "Suspended",
            "Suspended",
            "Running",
            "Progressing",
            "Fired",
            "Healthy",
            "Succeeded",
            "Healthy",
            "Failed",
            "Degraded",
            "Missed",
            "Degraded",
            "Invalid",
            "Degraded");
    for (Phase phase : Phase.values()) {
      Map<String, Object> task =
          ArgoCdLua.yaml(
              """
          metadata: {name: t, generation: 3}
          spec: {delay: 10m}
          status: {phase: %s, observedGeneration: 3, message: why}
          """
                  .formatted(phase.name()));
      assertThat(ArgoCdLua.run(HEALTH, task))
          .as(phase.name())
          .extracting(h -> ((Map<?, ?>) h).get("status"))
          .isEqualTo(expected.get(phase.name()));
    }
  }

  @Test
  void aStatusOfAnOlderGenerationIsProgressingWhateverItsPhase() {
    for (Phase phase : Phase.values()) {
      Map<String, Object> task =
          ArgoCdLua.yaml(
              """
          metadata: {name: t, generation: 4}
          spec: {delay: 10m}
          status: {phase: %s, observedGeneration: 3}
          """
                  .formatted(phase.name()));
      assertThat(ArgoCdLua.run(HEALTH, task))
          .as(phase.name())
          .isEqualTo(
              Map.of(
                  "status",
                  "Progressing",
                  "message",
                  "Waiting for the operator to observe generation 4"));
    }
  }

  private record Case(String inputPath, Map<String, Object> healthStatus) {}

  @SuppressWarnings("unchecked")
  private static List<Case> cases() {
    List<Map<String, Object>> tests =
        (List<Map<String, Object>>)
            ArgoCdLua.yamlFile(DELAYED_TASK.resolve("health_test.yaml")).get("tests");
    return tests.stream()
        .map(
            t -> new Case((String) t.get("inputPath"), (Map<String, Object>) t.get("healthStatus")))
        .toList();
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> status(Map<String, Object> task) {
    return (Map<String, Object>) task.getOrDefault("status", Map.of());
  }
}
