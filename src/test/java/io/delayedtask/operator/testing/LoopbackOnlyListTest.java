package io.delayedtask.operator.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The ITs that start the operator with the real resolver and sockets (as a process, or the sandbox)
 * are marked {@link RequiresLoopbackOnlyNetwork}, and exactly the marked ones (with LinkLocalSinkIT
 * and SinkReachIT) are pom.xml's loopbackOnlyITs and the default execution's excludes: a new such
 * IT cannot quietly run in the host's network, nor a marked one be skipped by every execution.
 */
class LoopbackOnlyListTest {
  private static final Path TESTS = Path.of("src/test/java");

  /**
   * What an IT's source names when it starts the operator outside OperatorFixture's guarded sockets
   * (a test that only reads the jar, as RuntimeJarIT does, starts nothing).
   */
  private static final Pattern STARTS_OPERATOR =
      Pattern.compile("OperatorProcess|FaultLab|new DevSandbox\\(|\"-jar\"");

  private static final Set<String> UNMARKED_IN_LIST = Set.of("LinkLocalSinkIT", "SinkReachIT");

  @Test
  void everyItThatStartsTheOperatorIsMarkedAndListedAndExcludedFromTheDefaultExecution()
      throws IOException {
    String pom = Files.readString(Path.of("pom.xml"));
    Matcher list = Pattern.compile("<loopbackOnlyITs>([^<]*)</loopbackOnlyITs>").matcher(pom);
    assertThat(list.find()).as("pom.xml's loopbackOnlyITs property").isTrue();
    Set<String> listed = new TreeSet<>(Arrays.asList(list.group(1).split(",")));
    Set<String> excluded = new TreeSet<>();
    Matcher exclude =
        Pattern.compile("<exclude>\\*\\*/([A-Za-z0-9]+)\\.java</exclude>").matcher(pom);
    while (exclude.find()) {
      excluded.add(exclude.group(1));
    }

    Set<String> marked = new TreeSet<>();
    Set<String> startingTheOperator = new TreeSet<>();
    for (Path file : its()) {
      String name = file.getFileName().toString().replace(".java", "");
      String source = Files.readString(file);
      if (source.contains("@RequiresLoopbackOnlyNetwork")) {
        marked.add(name);
      }
      if (STARTS_OPERATOR.matcher(source).find()) {
        startingTheOperator.add(name);
      }
    }

    assertThat(marked)
        .as("ITs that start the operator with the real resolver")
        .containsAll(startingTheOperator);
    Set<String> expected = new TreeSet<>(marked);
    expected.addAll(UNMARKED_IN_LIST);
    assertThat(listed).as("pom.xml's loopbackOnlyITs").isEqualTo(expected);
    assertThat(excluded).as("the default failsafe execution's excludes").containsAll(expected);
  }

  private static List<Path> its() throws IOException {
    try (Stream<Path> files = Files.walk(TESTS)) {
      return files.filter(f -> f.getFileName().toString().endsWith("IT.java")).toList();
    }
  }
}
