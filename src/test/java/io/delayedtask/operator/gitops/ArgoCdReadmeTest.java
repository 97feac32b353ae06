package io.delayedtask.operator.gitops;

import static io.delayedtask.operator.gitops.ArgoCdLua.DELAYED_TASK;
import static io.delayedtask.operator.gitops.ArgoCdLua.DELAYED_TASK_QUEUE;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The argocd-cm snippet docs/gitops.md tells users to apply carries exactly the scripts in argocd/.
 */
class ArgoCdReadmeTest {

  private static final Pattern YAML_BLOCK = Pattern.compile("(?s)```yaml\n(.*?)```");

  @Test
  @SuppressWarnings("unchecked")
  void theReadmeSnippetIsTheShippedScripts() {
    Map<String, Object> data = (Map<String, Object>) argocdCm().get("data");
    assertThat(data.get("resource.customizations.health.delayedtask.io_DelayedTask"))
        .isEqualTo(ArgoCdLua.read(DELAYED_TASK.resolve("health.lua")));
    assertThat(data.get("resource.customizations.health.delayedtask.io_DelayedTaskQueue"))
        .isEqualTo(ArgoCdLua.read(DELAYED_TASK_QUEUE.resolve("health.lua")));

    Map<String, Object> actions =
        ArgoCdLua.yaml(
            (String) data.get("resource.customizations.actions.delayedtask.io_DelayedTask"));
    assertThat(actions.get("discovery.lua"))
        .isEqualTo(ArgoCdLua.read(DELAYED_TASK.resolve("actions/discovery.lua")));
    List<Map<String, Object>> definitions = (List<Map<String, Object>>) actions.get("definitions");
    assertThat(definitions).extracting(d -> d.get("name")).containsExactly("suspend", "resume");
    for (Map<String, Object> definition : definitions) {
      assertThat(definition.get("action.lua"))
          .as((String) definition.get("name"))
          .isEqualTo(
              ArgoCdLua.read(
                  DELAYED_TASK.resolve("actions/" + definition.get("name") + "/action.lua")));
    }
  }

  private static Map<String, Object> argocdCm() {
    Matcher blocks = YAML_BLOCK.matcher(ArgoCdLua.read(Path.of("docs", "gitops.md")));
    while (blocks.find()) {
      if (blocks.group(1).contains("name: argocd-cm")) {
        return ArgoCdLua.yaml(blocks.group(1));
      }
    }
    throw new AssertionError("docs/gitops.md has no ```yaml block with the argocd-cm ConfigMap");
  }
}
