package io.delayedtask.operator.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The runnable jar ships the operator's own classes and no others: exactly those compiled from
 * src/main, none of the build steps of src/build (they run at build time and would be dead weight,
 * and their dependencies' attack surface, in the image).
 */
class RuntimeJarIT {
  /** The jar the build packaged (failsafe passes its path); reading it starts no operator. */
  private static final Path JAR =
      Path.of(System.getProperty("operator.jar", "target/delayed-task-operator.jar"));

  private static final String OWN = "io/delayedtask/operator/";

  @Test
  void theJarHoldsExactlyTheClassesOfSrcMain() throws IOException {
    Set<String> inJar;
    try (JarFile jar = new JarFile(JAR.toFile())) {
      inJar =
          jar.stream()
              .map(JarEntry::getName)
              .filter(name -> name.startsWith(OWN) && name.endsWith(".class"))
              .collect(Collectors.toSet());
    }
    Path main = Path.of("target", "classes");
    Set<String> compiledFromMain;
    try (Stream<Path> files = Files.walk(main.resolve(OWN))) {
      compiledFromMain =
          files
              .filter(file -> file.toString().endsWith(".class"))
              .map(file -> main.relativize(file).toString().replace('\\', '/'))
              .collect(Collectors.toSet());
    }

    assertThat(inJar)
        .contains(OWN + "DelayedTaskOperator.class")
        .doesNotContain(OWN + "api/PrinterColumnOrder.class")
        .isEqualTo(compiledFromMain);
  }

  @Test
  void theBuildStepIsCompiledApartFromTheRuntimeClasses() {
    assertThat(Path.of("target", "build-classes", OWN, "api", "PrinterColumnOrder.class"))
        .isRegularFile();
    assertThat(Path.of("target", "classes", OWN, "api", "PrinterColumnOrder.class")).doesNotExist();
  }
}
