package io.delayedtask.operator.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The Helm commands the docs tell a person to run, read as Helm reads them: {@code helm upgrade}
 * without {@code --reuse-values} resets every value set at install to the chart's default, so a
 * documented upgrade that adds a {@code --set} would drop the install's {@code image.repository}
 * (ImagePullBackOff on the next rollout).
 */
class HelmCommandsInDocsTest {
  private static final List<Path> PAGES =
      Stream.of(
              "README.md",
              "docs/install.md",
              "docs/operations.md",
              "docs/gitops.md",
              "docs/tour.md",
              "helm/delayed-task-operator/README.md")
          .map(Path::of)
          .toList();

  @Test
  void everyDocumentedUpgradeThatSetsValuesKeepsTheInstallsValues() throws IOException {
    List<String> upgrades = new ArrayList<>();
    for (Path page : PAGES) {
      for (String command : commands(Files.readString(page))) {
        if (command.startsWith("helm upgrade") && command.contains("--set")) {
          upgrades.add(page + ": " + command);
        }
      }
    }
    assertThat(upgrades)
        .as("documented helm upgrade commands that set values")
        .isNotEmpty()
        .allSatisfy(command -> assertThat(command).contains("--reuse-values"));
  }

  /** Shell commands inside the page's fenced blocks, continuation lines joined. */
  static List<String> commands(String markdown) {
    List<String> commands = new ArrayList<>();
    boolean inBlock = false;
    StringBuilder current = new StringBuilder();
    for (String line : markdown.split("\n")) {
      if (line.startsWith("```")) {
        inBlock = !inBlock;
        continue;
      }
      if (!inBlock) {
        continue;
      }
      String text = line.strip();
      if (text.startsWith("$ ")) {
        text = text.substring(2);
      }
      if (text.endsWith("\\")) {
        current.append(text, 0, text.length() - 1).append(' ');
        continue;
      }
      current.append(text);
      commands.add(current.toString().replaceAll("\\s+", " ").strip());
      current.setLength(0);
    }
    return commands;
  }
}
