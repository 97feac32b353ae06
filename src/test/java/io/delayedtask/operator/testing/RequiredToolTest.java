package io.delayedtask.operator.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.opentest4j.TestAbortedException;

class RequiredToolTest {

  @TempDir Path dir;

  @Test
  void findsAnExecutableOnThePath() throws IOException {
    Path tool = executable("promtool");
    assertThat(
            RequiredTool.find(
                "promtool",
                "DTO_PROMTOOL",
                "apt-get install -y prometheus",
                Map.of("PATH", "/nonexistent:" + dir)))
        .isEqualTo(tool);
  }

  @Test
  void theOverrideVariableWins() throws IOException {
    Path tool = executable("my-promtool");
    assertThat(
            RequiredTool.find(
                "promtool",
                "DTO_PROMTOOL",
                "x",
                Map.of("DTO_PROMTOOL", tool.toString(), "PATH", "")))
        .isEqualTo(tool);
  }

  @Test
  void missingSkipsOnADevelopersMachine() {
    assertThatThrownBy(
            () ->
                RequiredTool.find(
                    "promtool",
                    "DTO_PROMTOOL",
                    "apt-get install -y prometheus",
                    Map.of("PATH", dir.toString())))
        .isInstanceOf(TestAbortedException.class)
        .hasMessageContaining("promtool")
        .hasMessageContaining("apt-get install -y prometheus");
  }

  @Test
  void missingFailsOnCi() {
    assertThatThrownBy(
            () ->
                RequiredTool.find(
                    "promtool",
                    "DTO_PROMTOOL",
                    "apt-get install -y prometheus",
                    Map.of("PATH", dir.toString(), "CI", "true")))
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("CI=true");
  }

  @Test
  void aToolThatCannotDoTheJobSkipsOnADevelopersMachineAndFailsOnCi() {
    String why = "/usr/bin/redis-server has no TLS support";
    assertThatThrownBy(
            () -> RequiredTool.unusable(why, "apt-get install -y redis-server", Map.of()))
        .isInstanceOf(TestAbortedException.class)
        .hasMessageContaining(why);
    assertThatThrownBy(
            () ->
                RequiredTool.unusable(why, "apt-get install -y redis-server", Map.of("CI", "true")))
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining(why)
        .hasMessageContaining("CI=true");
  }

  @Test
  void aFileThatIsNotExecutableIsNotTheTool() throws IOException {
    Files.writeString(dir.resolve("promtool"), "");
    assertThat(RequiredTool.locate("promtool", null, dir.toString())).isEmpty();
  }

  private Path executable(String name) throws IOException {
    Path file = dir.resolve(name);
    Files.writeString(file, "#!/bin/sh\n");
    Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwxr-xr-x"));
    return file;
  }
}
