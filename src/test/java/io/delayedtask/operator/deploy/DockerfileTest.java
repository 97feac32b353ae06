package io.delayedtask.operator.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.apps.Deployment;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * No Docker engine runs here, so the image cannot be built in tests; what can drift is checked:
 * the jar it copies, the user it runs as (the manifests' runAsUser), and an exec-form entrypoint.
 */
class DockerfileTest {

  private static final List<String> LINES = read(Path.of("Dockerfile"));

  @Test
  void buildsFromTheJre17AndCopiesTheShadedJar() {
    assertThat(instructions("FROM")).containsExactly("eclipse-temurin:17-jre");
    assertThat(instructions("COPY")).containsExactly("target/delayed-task-operator.jar /app/delayed-task-operator.jar");
    assertThat(Path.of("pom.xml")).content().contains("<finalName>${project.artifactId}</finalName>",
        "<artifactId>delayed-task-operator</artifactId>");
  }

  @Test
  void runsAsTheNonRootUserTheManifestsExpect() {
    assertThat(instructions("USER")).containsExactly("10001:10001");
    Long chartUser = RenderedChart.render("{}").one(Deployment.class).getSpec().getTemplate().getSpec()
        .getSecurityContext().getRunAsUser();
    Long plainUser = Manifests.one(Manifests.read(Manifests.PLAIN.resolve("60-deployment.yaml")), Deployment.class)
        .getSpec().getTemplate().getSpec().getSecurityContext().getRunAsUser();
    assertThat(List.of(chartUser, plainUser)).containsOnly(10001L);
  }

  @Test
  void startsJavaDirectlyWithContainerAwareMemory() {
    assertThat(instructions("ENTRYPOINT")).containsExactly("[\"java\", \"-jar\", \"/app/delayed-task-operator.jar\"]");
    assertThat(instructions("ENV")).anySatisfy(env -> assertThat(env).startsWith("JDK_JAVA_OPTIONS=")
        .contains("-XX:MaxRAMPercentage=", "-XX:+ExitOnOutOfMemoryError", "-Djava.io.tmpdir=/tmp"));
  }

  private static List<String> instructions(String keyword) {
    return LINES.stream().filter(line -> line.startsWith(keyword + " "))
        .map(line -> line.substring(keyword.length() + 1).strip()).toList();
  }

  private static List<String> read(Path file) {
    try {
      return Files.readAllLines(file);
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }
}
