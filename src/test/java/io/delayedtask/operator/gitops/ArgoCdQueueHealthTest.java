package io.delayedtask.operator.gitops;

import static io.delayedtask.operator.gitops.ArgoCdLua.DELAYED_TASK_QUEUE;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * A DelayedTaskQueue's health.lua against the fixtures of its health_test.yaml: paused is
 * Suspended.
 */
class ArgoCdQueueHealthTest {

  private static final Path HEALTH = DELAYED_TASK_QUEUE.resolve("health.lua");

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
                              HEALTH,
                              ArgoCdLua.yamlFile(DELAYED_TASK_QUEUE.resolve(c.inputPath())));
                      assertThat(health).as(c.inputPath()).isEqualTo(c.healthStatus());
                    }));
  }

  @Test
  void aPausedQueueIsSuspendedAndAnActiveOneHealthy() {
    assertThat(cases())
        .extracting(c -> c.healthStatus().get("status"))
        .contains("Suspended", "Healthy", "Progressing");
    Map<String, Object> paused =
        ArgoCdLua.yamlFile(DELAYED_TASK_QUEUE.resolve("testdata/paused.yaml"));
    @SuppressWarnings("unchecked")
    Map<String, Object> spec = (Map<String, Object>) paused.get("spec");
    spec.put("paused", false);
    assertThat(ArgoCdLua.run(HEALTH, paused))
        .asInstanceOf(org.assertj.core.api.InstanceOfAssertFactories.MAP)
        .containsEntry("status", "Healthy");
  }

  private record Case(String inputPath, Map<String, Object> healthStatus) {}

  @SuppressWarnings("unchecked")
  private static List<Case> cases() {
    List<Map<String, Object>> tests =
        (List<Map<String, Object>>)
            ArgoCdLua.yamlFile(DELAYED_TASK_QUEUE.resolve("health_test.yaml")).get("tests");
    return tests.stream()
        .map(
            t -> new Case((String) t.get("inputPath"), (Map<String, Object>) t.get("healthStatus")))
        .toList();
  }
}
