package io.delayedtask.operator.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * kubectl-dt/krew/dt.yaml holds what krew's plugin manifest schema requires
 * (krew.googlecontainertools.github.com/v1alpha2 Plugin): a name that is the command, a semantic
 * version, a short description, and per platform a selector, an https URI, a sha256 and the binary.
 */
class KrewManifestTest {
  @Test
  void theManifestHasEveryFieldKrewRequires() throws Exception {
    JsonNode m = new YAMLMapper().readTree(Path.of("kubectl-dt/krew/dt.yaml").toFile());
    assertThat(m.path("apiVersion").asText())
        .isEqualTo("krew.googlecontainertools.github.com/v1alpha2");
    assertThat(m.path("kind").asText()).isEqualTo("Plugin");
    assertThat(m.path("metadata").path("name").asText()).isEqualTo("dt");
    JsonNode spec = m.path("spec");
    assertThat(spec.path("version").asText()).matches("v\\d+\\.\\d+\\.\\d+");
    assertThat(spec.path("shortDescription").asText()).isNotBlank().hasSizeLessThanOrEqualTo(50);
    assertThat(spec.path("description").asText()).isNotBlank();
    assertThat(spec.path("platforms")).isNotEmpty();
    Set<String> targets = new HashSet<>();
    for (JsonNode p : spec.path("platforms")) {
      JsonNode labels = p.path("selector").path("matchLabels");
      String os = labels.path("os").asText();
      String arch = labels.path("arch").asText();
      assertThat(targets.add(os + "/" + arch)).as("one entry per platform").isTrue();
      assertThat(p.path("uri").asText())
          .startsWith("https://")
          .endsWith(
              "/" + spec.path("version").asText() + "/kubectl-dt_" + os + "_" + arch + ".tar.gz");
      assertThat(p.path("sha256").asText()).matches("[0-9a-f]{64}");
      assertThat(p.path("bin").asText())
          .isEqualTo(os.equals("windows") ? "kubectl-dt.exe" : "kubectl-dt");
    }
    assertThat(targets).contains("linux/amd64", "darwin/arm64");
  }
}
