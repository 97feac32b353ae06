package io.delayedtask.operator.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The chart's README is what values.yaml's comments generate ({@link ChartReadme}), never stale.
 */
class ChartReadmeTest {

  @Test
  void theChartReadmeIsGeneratedFromValuesYaml() throws IOException {
    assertThat(ChartReadme.README).exists();
    assertThat(Files.readString(ChartReadme.README))
        .as(
            "helm/delayed-task-operator/README.md differs from values.yaml's comments: regenerate it with "
                + "mvn -q test-compile exec:java -Dexec.classpathScope=test "
                + "-Dexec.mainClass=io.delayedtask.operator.deploy.ChartReadme")
        .isEqualTo(ChartReadme.generate());
  }

  @Test
  void everyValueIsARowWithItsDefaultAndComment() throws IOException {
    String readme = ChartReadme.generate();
    assertThat(readme)
        .contains(
            "| `image.digest` | `\"\"` | Image digest (sha256:...); set, it pins the image and the tag is not used. |")
        .contains("| `replicaCount` | `2` | Operator pods.")
        .contains("| `redis.bundled.image.tag` | `\"7.2.4\"` |")
        .contains(
            "| `resources` | `{requests: {cpu: 100m, memory: 256Mi}, limits: {cpu: '1', memory: 512Mi}}` |")
        .contains("### `redis`")
        .doesNotContain("| `resources.requests");
    List<String> rows = readme.lines().filter(line -> line.startsWith("| `")).toList();
    assertThat(rows).as("no value without its comment").noneMatch(row -> row.endsWith("|  |"));
  }

  @Test
  void aChangedCommentChangesTheReadme() throws IOException {
    Path copy = Files.createTempFile("values", ".yaml");
    try {
      String values = Files.readString(ChartReadme.VALUES);
      assertThat(values).contains("# Operator pods.");
      Files.writeString(copy, values.replace("# Operator pods.", "# Operator replicas."));
      assertThat(ChartReadme.generate(copy))
          .contains("| `replicaCount` | `2` | Operator replicas.")
          .isNotEqualTo(ChartReadme.generate());
    } finally {
      Files.delete(copy);
    }
  }
}
