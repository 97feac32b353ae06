package io.delayedtask.operator.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The README as a newcomer reads it: the two set-up commands word for word (the sandbox, which
 * DevSandboxIT runs, and the test command, which .ci/run runs), and the sections a person deciding
 * looks for, in the order they look for them.
 */
class ReadmeTest {
  static final String SANDBOX = "mvn -B -q -Psandbox test-compile exec:java";
  static final String VERIFY = "mvn -B verify";

  @Test
  void theTwoSetUpCommandsStayWordForWord() throws IOException {
    List<String> lines = Files.readAllLines(Path.of("README.md"));
    assertThat(lines).contains(SANDBOX, VERIFY);
    List<String> ci =
        Files.readAllLines(Path.of(".ci", "run")).stream()
            .map(String::strip)
            .filter(line -> !line.isEmpty() && !line.startsWith("#"))
            .toList();
    assertThat(ci.get(ci.size() - 1))
        .as(".ci/run ends with the README's test command")
        .isEqualTo(VERIFY);
    assertThat(Files.readString(Path.of("pom.xml")))
        .contains(
            "<id>sandbox</id>",
            "<mainClass>io.delayedtask.operator.sandbox.DevSandbox</mainClass>");
  }

  @Test
  void thePersonDecidingFindsWhatTheyLookForInOrder() throws IOException {
    List<String> headings =
        Files.readAllLines(Path.of("README.md")).stream().filter(l -> l.startsWith("## ")).toList();
    assertThat(headings)
        .containsSubsequence(
            "## Requirements",
            "## Install on a cluster",
            "## A first task, and how to watch it",
            "## What it guarantees",
            "## Try it without a cluster",
            "## Documentation");
    assertThat(Files.readAllLines(Path.of("README.md")))
        .as(
            "the README stays a page a person deciding reads"
                + " (transcripts belong in docs/tour.md)")
        .hasSizeLessThan(200);
    String readme = Files.readString(Path.of("README.md"));
    assertThat(readme)
        .contains(
            "Why Redis",
            "1.30",
            "v1alpha1",
            "at most one Job per due time",
            "at least once",
            "`ce-id`",
            "at most once",
            "docs/reliability.md#limits-that-remain");
  }
}
