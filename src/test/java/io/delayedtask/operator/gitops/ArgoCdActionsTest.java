package io.delayedtask.operator.gitops;

import static io.delayedtask.operator.gitops.ArgoCdLua.DELAYED_TASK;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * Runs actions/discovery.lua and the suspend and resume actions against the fixtures named in
 * actions/action_test.yaml (Argo CD's own test layout).
 */
class ArgoCdActionsTest {

  private static final Path ACTIONS = DELAYED_TASK.resolve("actions");
  private static final Map<String, Object> TESTS =
      ArgoCdLua.yamlFile(ACTIONS.resolve("action_test.yaml"));

  @TestFactory
  @SuppressWarnings("unchecked")
  Stream<DynamicTest> discoveryOffersWhatTheTestsSay() {
    return ((List<Map<String, Object>>) TESTS.get("discoveryTests"))
        .stream()
            .map(
                t -> {
                  String input = (String) t.get("inputPath");
                  return DynamicTest.dynamicTest(
                      input,
                      () -> {
                        Map<String, Object> actions =
                            (Map<String, Object>)
                                ArgoCdLua.run(
                                    ACTIONS.resolve("discovery.lua"),
                                    ArgoCdLua.yamlFile(ACTIONS.resolve(input)));
                        Map<String, Object> disabled = new LinkedHashMap<>();
                        actions.forEach(
                            (name, action) ->
                                disabled.put(name, ((Map<String, Object>) action).get("disabled")));
                        Map<String, Object> expected = new LinkedHashMap<>();
                        ((List<Map<String, Object>>) t.get("result"))
                            .forEach(r -> expected.put((String) r.get("name"), r.get("disabled")));
                        assertThat(disabled).as(input).isEqualTo(expected);
                      });
                });
  }

  @TestFactory
  @SuppressWarnings("unchecked")
  Stream<DynamicTest> eachActionReturnsTheExpectedObject() {
    return ((List<Map<String, Object>>) TESTS.get("actionTests"))
        .stream()
            .map(
                t -> {
                  String action = (String) t.get("action");
                  String input = (String) t.get("inputPath");
                  return DynamicTest.dynamicTest(
                      action + " " + input,
                      () -> {
                        Object result =
                            ArgoCdLua.run(
                                ACTIONS.resolve(action).resolve("action.lua"),
                                ArgoCdLua.yamlFile(ACTIONS.resolve(input)));
                        assertThat(result)
                            .isEqualTo(
                                ArgoCdLua.yamlFile(
                                    ACTIONS.resolve((String) t.get("expectedOutputPath"))));
                      });
                });
  }

  @Test
  void suspendSetsSpecSuspendAndKeepsEverythingElse() {
    Map<String, Object> scheduled =
        ArgoCdLua.yamlFile(DELAYED_TASK.resolve("testdata/scheduled.yaml"));
    Map<String, Object> result = run("suspend", scheduled);
    assertThat(spec(result))
        .containsEntry("suspend", true)
        .containsEntry("runAt", spec(scheduled).get("runAt"));
    assertThat(result.get("status")).isEqualTo(scheduled.get("status"));
    assertThat(result.get("metadata")).isEqualTo(scheduled.get("metadata"));
  }

  @Test
  void resumeClearsSpecSuspend() {
    Map<String, Object> suspended =
        ArgoCdLua.yamlFile(DELAYED_TASK.resolve("testdata/suspended.yaml"));
    assertThat(spec(suspended)).containsEntry("suspend", true);
    assertThat(spec(run("resume", suspended))).containsEntry("suspend", false);
  }

  @Test
  void suspendThenResumeOffersTheOtherActionEachTime() {
    Map<String, Object> task = ArgoCdLua.yamlFile(DELAYED_TASK.resolve("testdata/scheduled.yaml"));
    Map<String, Object> suspended = run("suspend", task);
    assertThat(disabled(suspended)).isEqualTo(Map.of("suspend", true, "resume", false));
    assertThat(disabled(run("resume", suspended)))
        .isEqualTo(Map.of("suspend", false, "resume", true));
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> run(String action, Map<String, Object> task) {
    return (Map<String, Object>) ArgoCdLua.run(ACTIONS.resolve(action).resolve("action.lua"), task);
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> disabled(Map<String, Object> task) {
    Map<String, Object> actions =
        (Map<String, Object>) ArgoCdLua.run(ACTIONS.resolve("discovery.lua"), task);
    Map<String, Object> out = new LinkedHashMap<>();
    actions.forEach(
        (name, action) -> out.put(name, ((Map<String, Object>) action).get("disabled")));
    return out;
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> spec(Map<String, Object> task) {
    return (Map<String, Object>) task.get("spec");
  }
}
