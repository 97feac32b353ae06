package io.delayedtask.operator.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.apps.Deployment;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The image, both ways it is built: the multi-stage Dockerfile ({@code docker build .} from a clean
 * checkout) and Jib ({@code mvn jib:buildTar}, no daemon). Neither can be built here: there is no
 * Docker daemon, and Jib must pull its base image from a registry this machine cannot reach. So the
 * test says so loudly and checks what the image will be from the text that makes it: bases pinned
 * by digest, a numeric non-root user (the manifests' runAsUser), an exec-form entrypoint (no shell
 * needed at run time, none run in the runtime stage), the licences inside, and Jib's configuration
 * equal to the Dockerfile's runtime stage.
 */
class DockerfileTest {
  private static final Pattern PINNED =
      Pattern.compile("[a-z0-9./-]+:[A-Za-z0-9._-]+@sha256:[0-9a-f]{64}");
  private static final List<String> LINES = read(Path.of("Dockerfile"));
  private static final String POM = String.join("\n", read(Path.of("pom.xml")));

  @BeforeAll
  static void sayWhatIsNotChecked() {
    System.err.println(
        "*** DockerfileTest: NOT CHECKED HERE: building the image and reading its config "
            + "(no Docker daemon; jib:buildTar cannot pull the base without a registry). Checked instead: the "
            + "Dockerfile's and pom.xml's Jib text. Build it with `docker build .` or `mvn -DskipTests package "
            + "jib:buildTar` where a registry is reachable. ***");
  }

  @Test
  void twoStagesOnBaseImagesPinnedByDigest() {
    List<String> froms = instructions(LINES, "FROM");
    assertThat(froms).hasSize(2);
    assertThat(froms.get(0))
        .startsWith("maven:3.9-eclipse-temurin-17@sha256:")
        .endsWith(" AS build");
    assertThat(froms.get(1)).startsWith("eclipse-temurin:17-jre@sha256:");
    assertThat(froms)
        .allSatisfy(from -> assertThat(from.split(" ")[0]).as("pinned by digest").matches(PINNED));
  }

  @Test
  void theBuildStageBuildsTheJarFromTheSourcesWithoutTestsOrSystemPackages() {
    List<String> build = stage(0);
    assertThat(instructions(build, "COPY"))
        .containsExactly("pom.xml ./", "src/main ./src/main", "src/build ./src/build");
    assertThat(String.join("\n", build))
        .contains("mvn -B -q -Dmaven.test.skip=true -Dmdep.skip=true package")
        .doesNotContain("apt-get", "install-test-packages");
    assertThat(read(Path.of(".dockerignore")))
        .contains(
            "*",
            "!pom.xml",
            "!src/main/",
            "!src/build/",
            "!LICENSE",
            "!NOTICE",
            "!THIRD-PARTY-NOTICES.md");
    assertThat(POM)
        .contains(
            "<finalName>${project.artifactId}</finalName>",
            "<artifactId>delayed-task-operator</artifactId>");
  }

  /**
   * The version stamp as the Docker build makes it: no .git in the build context, the commit passed
   * as the GIT_COMMIT build argument. Runs the pom's own build-info script, not a copy of it.
   */
  @Test
  void aDockerBuildStampsTheCommitItIsGiven() throws Exception {
    List<String> build = stage(0);
    assertThat(instructions(build, "ARG")).containsExactly("GIT_COMMIT=unknown");
    assertThat(String.join("\n", build)).contains("DELAYEDTASK_GIT_COMMIT=\"$GIT_COMMIT\" mvn");
    Matcher step =
        Pattern.compile(
                "(?s)<id>build-info</id>.*?<argument>-c</argument>\\s*<argument>(.*?)</argument>")
            .matcher(POM);
    assertThat(step.find()).as("pom.xml's build-info step").isTrue();
    String script = step.group(1).replace("&gt;", ">").replace("&lt;", "<").replace("&amp;", "&");
    Path sources = Files.createTempDirectory("no-git-");
    Path out = sources.resolve("build.properties");
    for (var commit : Map.of("0123abc", "commit=0123abc", "", "commit=unknown").entrySet()) {
      ProcessBuilder bash =
          new ProcessBuilder(
                  "bash", "-c", script, "build-info", "0.1.0", sources.toString(), out.toString())
              .redirectErrorStream(true);
      bash.environment().put("GIT_CEILING_DIRECTORIES", sources.getParent().toString());
      if (commit.getKey().isEmpty()) {
        bash.environment().remove("DELAYEDTASK_GIT_COMMIT");
      } else {
        bash.environment().put("DELAYEDTASK_GIT_COMMIT", commit.getKey());
      }
      assertThat(bash.start().waitFor()).isZero();
      assertThat(Files.readAllLines(out)).containsExactly("version=0.1.0", commit.getValue());
    }
  }

  @Test
  void theRuntimeStageCopiesTheJarAndTheLicencesAndRunsNoShell() {
    List<String> runtime = stage(1);
    assertThat(instructions(runtime, "COPY"))
        .containsExactly(
            "--from=build /src/target/delayed-task-operator.jar /app/delayed-task-operator.jar",
            "LICENSE NOTICE THIRD-PARTY-NOTICES.md /licenses/");
    assertThat(instructions(runtime, "RUN"))
        .as("no RUN: nothing needs a shell or a package manager")
        .isEmpty();
  }

  @Test
  void runsAsTheNonRootUserTheManifestsExpect() {
    assertThat(instructions(stage(1), "USER")).containsExactly("10001:10001");
    assertThat(POM).contains("<user>10001:10001</user>");
    Long chartUser =
        RenderedChart.render("{}")
            .one(Deployment.class)
            .getSpec()
            .getTemplate()
            .getSpec()
            .getSecurityContext()
            .getRunAsUser();
    Long plainUser =
        Manifests.one(
                Manifests.read(Manifests.PLAIN.resolve("60-deployment.yaml")), Deployment.class)
            .getSpec()
            .getTemplate()
            .getSpec()
            .getSecurityContext()
            .getRunAsUser();
    assertThat(List.of(chartUser, plainUser)).containsOnly(10001L);
  }

  @Test
  void startsJavaDirectlyWithContainerAwareMemory() {
    assertThat(instructions(stage(1), "ENTRYPOINT"))
        .containsExactly("[\"java\", \"-jar\", \"/app/delayed-task-operator.jar\"]");
    List<String> env = instructions(stage(1), "ENV");
    assertThat(env).hasSize(1);
    assertThat(env.get(0))
        .startsWith("JDK_JAVA_OPTIONS=")
        .contains("-XX:MaxRAMPercentage=", "-XX:+ExitOnOutOfMemoryError", "-Djava.io.tmpdir=/tmp");
    String options = env.get(0).substring("JDK_JAVA_OPTIONS=".length()).replace("\"", "");
    assertThat(POM)
        .as("Jib sets the same JVM options")
        .contains("<JDK_JAVA_OPTIONS>" + options + "</JDK_JAVA_OPTIONS>");
  }

  @Test
  void jibBuildsFromTheSameBaseWithTheLicences() {
    String runtimeBase = instructions(stage(1), "FROM").get(0);
    assertThat(POM)
        .contains(
            "<artifactId>jib-maven-plugin</artifactId>",
            "<image>" + runtimeBase + "</image>",
            "<mainClass>io.delayedtask.operator.DelayedTaskOperator</mainClass>",
            "<port>8080</port>",
            "<includes>LICENSE,NOTICE,THIRD-PARTY-NOTICES.md</includes>",
            "<into>/licenses</into>");
    assertThat(instructions(stage(1), "EXPOSE")).containsExactly("8080");
  }

  /** The lines of stage {@code index} (0: the first FROM up to the second). */
  private static List<String> stage(int index) {
    List<List<String>> stages = new ArrayList<>();
    for (String line : LINES) {
      if (line.startsWith("FROM ")) {
        stages.add(new ArrayList<>());
      }
      if (!stages.isEmpty()) {
        stages.get(stages.size() - 1).add(line);
      }
    }
    return stages.get(index);
  }

  private static List<String> instructions(List<String> lines, String keyword) {
    List<String> joined = new ArrayList<>();
    StringBuilder current = null;
    for (String line : lines) {
      if (current != null) {
        current.append(' ').append(line.strip());
      } else if (line.startsWith(keyword + " ")) {
        current = new StringBuilder(line.substring(keyword.length() + 1).strip());
      }
      if (current != null && !line.endsWith("\\")) {
        joined.add(current.toString().replace("\\ ", "").replaceAll("\\s+", " ").strip());
        current = null;
      }
    }
    return joined;
  }

  private static List<String> read(Path file) {
    try {
      return Files.readAllLines(file);
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }
}
