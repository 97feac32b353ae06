package io.delayedtask.operator.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The licence as an adopter's legal review looks for it: Apache-2.0 in LICENSE, the pom, the chart
 * and the image; and THIRD-PARTY-NOTICES.md listing exactly the libraries the jar ships, as the
 * build resolved them (target/runtime-dependencies.txt, written by maven-dependency-plugin's list
 * goal at generate-test-resources).
 */
class LicensingTest {
  private static final Path RUNTIME_DEPENDENCIES = Path.of("target", "runtime-dependencies.txt");
  private static final Pattern DEPENDENCY_LINE =
      Pattern.compile("^\\s+([^:\\s]+):([^:\\s]+):jar:([^:\\s]+):(compile|runtime)\\b.*$");
  private static final Pattern NOTICE_ROW =
      Pattern.compile("^\\| `([^:`]+):([^`]+)` \\| (\\S+) \\| (.+) \\|$");

  @Test
  void theLicenceIsApache2EverywhereAnAdopterLooks() throws IOException {
    assertThat(Files.readString(Path.of("LICENSE")))
        .contains(
            "Apache License",
            "Version 2.0, January 2004",
            "TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION");
    assertThat(Files.readString(Path.of("NOTICE")))
        .contains("delayed-task-operator", "Apache License, Version 2.0", "THIRD-PARTY-NOTICES.md");
    assertThat(Files.readString(Path.of("pom.xml")))
        .contains("<licenses>", "<name>Apache-2.0</name>");
    assertThat(Files.readString(Path.of("helm", "delayed-task-operator", "Chart.yaml")))
        .contains("artifacthub.io/license: Apache-2.0");
    assertThat(Files.readString(Path.of("Dockerfile")))
        .contains("COPY LICENSE NOTICE THIRD-PARTY-NOTICES.md /licenses/");
  }

  @Test
  void theThirdPartyNoticesListExactlyTheLibrariesTheJarShips() throws IOException {
    assertThat(RUNTIME_DEPENDENCIES)
        .as("written by `mvn generate-test-resources` (maven-dependency-plugin list)")
        .exists();
    List<String> resolved =
        Files.readAllLines(RUNTIME_DEPENDENCIES).stream()
            .map(DEPENDENCY_LINE::matcher)
            .filter(Matcher::matches)
            .map(m -> m.group(1) + ":" + m.group(2) + " " + m.group(3))
            .sorted()
            .toList();
    List<Matcher> rows =
        Files.readAllLines(Path.of("THIRD-PARTY-NOTICES.md")).stream()
            .map(NOTICE_ROW::matcher)
            .filter(Matcher::matches)
            .toList();
    List<String> listed =
        rows.stream().map(m -> m.group(1) + ":" + m.group(2) + " " + m.group(3)).sorted().toList();
    assertThat(resolved)
        .as("the runtime classpath")
        .isNotEmpty()
        .contains("io.lettuce:lettuce-core 7.7.0.RELEASE");
    assertThat(listed)
        .as(
            "THIRD-PARTY-NOTICES.md against the build's runtime classpath: add, remove or bump rows")
        .containsExactlyElementsOf(resolved);
    assertThat(rows)
        .allSatisfy(
            m ->
                assertThat(m.group(4))
                    .as("licence of %s", m.group(2))
                    .matches("[A-Za-z0-9.\\-]+( (OR|WITH) [A-Za-z0-9.\\-]+)*"));
  }
}
