package io.delayedtask.operator.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.delayedtask.operator.testing.RequiresLoopbackOnlyNetwork;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * {@code java -jar target/delayed-task-operator.jar --help} and {@code --version} as a user runs
 * them: no cluster, no Redis, exit status 0 at once; the version and commit are the ones this build
 * embedded.
 */
@RequiresLoopbackOnlyNetwork
class CommandLineJarIT {
  private static final Path JAR =
      Path.of(System.getProperty("operator.jar", "target/delayed-task-operator.jar"));

  record Run(int exitCode, String stdout, String stderr) {}

  @Test
  void helpPrintsEveryVariableWithItsDefaultAndExitsZero() throws Exception {
    Run help = run("--help");

    assertThat(help.exitCode()).as(help.stderr()).isZero();
    assertThat(help.stdout())
        .contains(
            "Usage: java -jar delayed-task-operator.jar",
            "DELAYEDTASK_REDIS_URI  (default: redis://localhost:6379)",
            "DELAYEDTASK_SINK_ALLOWED_URIS  (default: none)",
            "DELAYEDTASK_LOG_LEVEL  (default: INFO)",
            "DELAYEDTASK_ADMISSION_POLICY  (default: delayed-task-operator-author-rights,delayed-task-operator-status-writer)");
    assertThat(help.stdout().lines().filter(line -> line.startsWith("  DELAYEDTASK_"))).hasSize(26);
    assertThat(help.stdout()).as("no log line: nothing started").doesNotContain("Starting");
  }

  @Test
  void versionPrintsThePomVersionAndTheCommitItWasBuiltFrom() throws Exception {
    Run version = run("--version");

    assertThat(version.exitCode()).as(version.stderr()).isZero();
    assertThat(version.stdout().strip())
        .matches(
            "delayed-task-operator "
                + Pattern.quote(pomVersion())
                + " \\(commit [0-9a-f]{40}(-dirty)?\\)");
    String head = git("rev-parse", "HEAD");
    if (!head.isEmpty()) {
      assertThat(version.stdout()).contains("(commit " + head);
    }
  }

  @Test
  void anUnknownArgumentExitsWithStatusTwo() throws Exception {
    Run unknown = run("--frobnicate");

    assertThat(unknown.exitCode()).isEqualTo(2);
    assertThat(unknown.stderr()).contains("Usage: java -jar delayed-task-operator.jar");
  }

  private static Run run(String argument) throws IOException, InterruptedException {
    assertThat(JAR).as("packaged by mvn package before the ITs").exists();
    Path stderr = Files.createTempFile("jar-", ".err");
    try {
      ProcessBuilder builder =
          new ProcessBuilder(
                  Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                  "-jar",
                  JAR.toString(),
                  argument)
              .redirectError(stderr.toFile());
      // Nothing it could reach: --help and --version must not need a cluster.
      builder
          .environment()
          .keySet()
          .removeIf(key -> key.startsWith("DELAYEDTASK_") || key.equals("KUBECONFIG"));
      Process process = builder.start();
      String stdout = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertThat(process.waitFor(30, TimeUnit.SECONDS)).as("exits by itself").isTrue();
      return new Run(process.exitValue(), stdout, Files.readString(stderr));
    } finally {
      Files.deleteIfExists(stderr);
    }
  }

  private static String pomVersion() throws IOException {
    Matcher version =
        Pattern.compile(
                "<artifactId>delayed-task-operator</artifactId>\\s*<version>([^<]+)</version>")
            .matcher(Files.readString(Path.of("pom.xml")));
    assertThat(version.find()).as("the project's version in pom.xml").isTrue();
    return version.group(1);
  }

  /** git's answer, or "" where git or the checkout is missing. */
  private static String git(String... args) throws IOException, InterruptedException {
    try {
      Process process =
          new ProcessBuilder(Stream.concat(Stream.of("git"), Stream.of(args)).toList())
              .redirectErrorStream(true)
              .start();
      String out =
          new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
      return process.waitFor() == 0 ? out : "";
    } catch (IOException e) {
      return "";
    }
  }
}
