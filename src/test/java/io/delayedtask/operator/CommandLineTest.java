package io.delayedtask.operator;

import static org.assertj.core.api.Assertions.assertThat;

import io.delayedtask.operator.config.OperatorConfig;
import io.delayedtask.operator.config.SinkConfig;
import io.delayedtask.operator.trace.Tracing;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.OptionalInt;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

class CommandLineTest {
  private static final Pattern DOCUMENTED_VARIABLE =
      Pattern.compile("^\\| `(DELAYEDTASK_[A-Z_]+)` \\|");
  private static final BuildInfo BUILD =
      new BuildInfo("1.2.3", "0123456789abcdef0123456789abcdef01234567");

  private final ByteArrayOutputStream out = new ByteArrayOutputStream();
  private final ByteArrayOutputStream err = new ByteArrayOutputStream();

  private OptionalInt run(String... args) {
    return CommandLine.handle(
        args,
        BUILD,
        new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8));
  }

  @Test
  void withoutArgumentsTheOperatorStarts() {
    assertThat(run()).isEmpty();
    assertThat(out.toString(StandardCharsets.UTF_8)).isEmpty();
    assertThat(err.toString(StandardCharsets.UTF_8)).isEmpty();
  }

  @Test
  void helpListsEveryVariableTheConfigurationReadsWithItsDefaultAndExitsZero() {
    assertThat(run("--help")).hasValue(0);
    String help = out.toString(StandardCharsets.UTF_8);

    assertThat(help)
        .startsWith("delayed-task-operator 1.2.3 (commit 0123456789abcdef0123456789abcdef01234567)")
        .contains(CommandLine.USAGE);
    assertThat(variableConstants())
        .as("every DELAYEDTASK_ constant of OperatorConfig and SinkConfig")
        .hasSizeGreaterThanOrEqualTo(20)
        .allSatisfy(name -> assertThat(help).contains("  " + name + "  (default: "));
    assertThat(help)
        .contains(
            "DELAYEDTASK_REDIS_URI  (default: redis://localhost:6379)",
            "DELAYEDTASK_RESYNC_SECONDS  (default: 300)",
            "DELAYEDTASK_LEASE_DURATION_SECONDS  (default: 4)",
            "DELAYEDTASK_SINK_CLUSTER_DOMAIN  (default: cluster.local)",
            "DELAYEDTASK_SINK_MAX_IN_FLIGHT  (default: 256)",
            "DELAYEDTASK_LOG_FORMAT  (default: text)");
    assertThat(err.toString(StandardCharsets.UTF_8)).isEmpty();
  }

  @Test
  void everyVariableHasOneEntryWithADefaultAndAMeaning() {
    List<String> names = CommandLine.variables().stream().map(CommandLine.Variable::name).toList();
    assertThat(names).doesNotHaveDuplicates().containsAll(variableConstants());
    assertThat(CommandLine.variables())
        .allSatisfy(
            variable -> {
              assertThat(variable.defaultValue()).isNotBlank();
              assertThat(variable.meaning()).isNotBlank();
            });
  }

  @Test
  void shortHelpFlagIsTheSame() {
    assertThat(run("-h")).hasValue(0);
    assertThat(out.toString(StandardCharsets.UTF_8)).isEqualTo(CommandLine.help(BUILD));
  }

  @Test
  void versionPrintsVersionAndCommitAndExitsZero() {
    assertThat(run("--version")).hasValue(0);
    assertThat(out.toString(StandardCharsets.UTF_8).strip())
        .isEqualTo("delayed-task-operator 1.2.3 (commit 0123456789abcdef0123456789abcdef01234567)");
  }

  @Test
  void anUnknownArgumentPrintsTheUsageAndExitsWithStatusTwo() {
    assertThat(run("--redis", "redis://x")).hasValue(2);
    assertThat(out.toString(StandardCharsets.UTF_8)).isEmpty();
    assertThat(err.toString(StandardCharsets.UTF_8))
        .contains("Unknown argument '--redis redis://x'")
        .contains(CommandLine.USAGE);
  }

  @Test
  void theMavenBuildEmbedsTheVersionAndCommit() {
    BuildInfo build = BuildInfo.ofThisBuild();
    assertThat(build.version())
        .as("from build.properties, written at generate-resources")
        .matches("\\d+\\.\\d+\\.\\d+.*");
    assertThat(build.commit()).matches("[0-9a-f]{40}(-dirty)?|unknown");
  }

  @Test
  void helpNamesTheOpenTelemetryVariablesThatTurnTracingOnOrOff() {
    assertThat(run("--help")).hasValue(0);
    String help = out.toString(StandardCharsets.UTF_8);
    assertThat(help)
        .contains(
            Tracing.OTLP_ENDPOINT,
            Tracing.OTLP_TRACES_ENDPOINT,
            Tracing.TRACES_EXPORTER,
            Tracing.SDK_DISABLED,
            "OTEL_SERVICE_NAME  (default: delayed-task-operator)");
  }

  @Test
  void helpAndTheOperationsGuideListTheSameVariables() throws Exception {
    List<String> documented =
        Files.readAllLines(Path.of("docs", "operations.md")).stream()
            .map(DOCUMENTED_VARIABLE::matcher)
            .filter(Matcher::find)
            .map(row -> row.group(1))
            .toList();
    assertThat(documented)
        .as("the configuration table of docs/operations.md")
        .containsExactlyInAnyOrderElementsOf(
            CommandLine.variables().stream().map(CommandLine.Variable::name).toList());
  }

  /** The names of every DELAYEDTASK_* variable the configuration classes read. */
  static List<String> variableConstants() {
    return Stream.of(OperatorConfig.class, SinkConfig.class)
        .flatMap(type -> Arrays.stream(type.getDeclaredFields()))
        .filter(field -> Modifier.isStatic(field.getModifiers()) && field.getType() == String.class)
        .map(CommandLineTest::value)
        .filter(value -> value != null && value.startsWith("DELAYEDTASK_"))
        .toList();
  }

  private static String value(Field field) {
    try {
      field.setAccessible(true);
      return (String) field.get(null);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException(e);
    }
  }
}
