package io.delayedtask.operator;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The folders of DESIGN.md depend one way only: the reconciler (with the threads that run it) on
 * the leader's duties and on the sink's delivery, all of them on the shared task rules and the
 * Redis schedule, everything on the API types; nothing back. The parts of a decision ({@code
 * decision/}) lie below both the decider and the sink's delivery, which decide in those types and
 * never import each other the wrong way: {@code sink/} answers the decider with a plan made of
 * them, never importing {@code reconcile/}; {@code decision/} imports nothing of the operator's.
 * {@code leader/} hands claims to the reconciler through callbacks, never importing it or its
 * thread pool.
 *
 * <p>The shared task rules are one package per job, themselves in one order: {@code task.status}
 * (what a status says) on {@code task.spec} (what a spec asks), which reads {@code task.cache}
 * (what the informers keep), which names {@code task.job} (the Job a firing creates) and {@code
 * task.lifetime} (deadline, TTL, GitOps keep); all on {@code task.time} (the contract's times). No
 * class lives in {@code task} itself.
 */
class LayoutTest {
  private static final String ROOT = "io.delayedtask.operator";

  private final JavaClasses operator =
      new ClassFileImporter()
          .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
          .importPackages(ROOT);

  @Test
  void foldersDependOneWay() {
    layeredArchitecture()
        .consideringOnlyDependenciesInLayers()
        .layer("process")
        .definedBy(ROOT)
        .layer("http")
        .definedBy(ROOT + ".http..")
        .layer("reconcile")
        .definedBy(ROOT + ".reconcile..")
        .layer("leader")
        .definedBy(ROOT + ".leader..")
        .layer("task.status")
        .definedBy(ROOT + ".task.status..")
        .layer("task.spec")
        .definedBy(ROOT + ".task.spec..")
        .layer("task.cache")
        .definedBy(ROOT + ".task.cache..")
        .layer("task.job")
        .definedBy(ROOT + ".task.job..")
        .layer("task.lifetime")
        .definedBy(ROOT + ".task.lifetime..")
        .layer("task.time")
        .definedBy(ROOT + ".task.time..")
        .layer("schedule")
        .definedBy(ROOT + ".schedule..")
        .layer("sink")
        .definedBy(ROOT + ".sink..")
        .layer("decision")
        .definedBy(ROOT + ".decision..")
        .layer("trace")
        .definedBy(ROOT + ".trace..")
        .layer("config")
        .definedBy(ROOT + ".config..")
        .layer("api")
        .definedBy(ROOT + ".api..")
        .whereLayer("process")
        .mayNotBeAccessedByAnyLayer()
        .whereLayer("http")
        .mayOnlyBeAccessedByLayers("process")
        .whereLayer("reconcile")
        .mayOnlyBeAccessedByLayers("process")
        .whereLayer("leader")
        .mayOnlyBeAccessedByLayers("process", "reconcile")
        .whereLayer("task.status")
        .mayOnlyBeAccessedByLayers("process", "reconcile", "leader", "sink")
        .whereLayer("task.spec")
        .mayOnlyBeAccessedByLayers("process", "reconcile", "leader", "sink", "task.status")
        .whereLayer("task.cache")
        .mayOnlyBeAccessedByLayers("process", "reconcile", "sink", "task.spec")
        .whereLayer("task.job")
        .mayOnlyBeAccessedByLayers("process", "reconcile", "sink", "trace", "task.cache")
        .whereLayer("task.lifetime")
        .mayOnlyBeAccessedByLayers("process", "reconcile", "task.cache")
        .whereLayer("task.time")
        .mayOnlyBeAccessedByLayers(
            "process",
            "reconcile",
            "leader",
            "sink",
            "trace",
            "task.status",
            "task.spec",
            "task.job")
        .whereLayer("schedule")
        .mayOnlyBeAccessedByLayers("process", "reconcile", "leader", "sink")
        .whereLayer("sink")
        .mayOnlyBeAccessedByLayers("process", "reconcile")
        .whereLayer("decision")
        .mayOnlyBeAccessedByLayers("process", "reconcile", "sink")
        .whereLayer("trace")
        .mayOnlyBeAccessedByLayers("process", "reconcile", "sink")
        .whereLayer("config")
        .mayOnlyBeAccessedByLayers("process", "schedule", "sink", "reconcile", "trace")
        .check(operator);
  }

  @Test
  void theTaskRulesLiveInTheirSubpackagesNotInTaskItself() {
    noClasses().should().resideInAPackage(ROOT + ".task").check(operator);
  }

  @Test
  void theDecisionsVocabularyDependsOnNothingOfTheOperators() {
    classes()
        .that()
        .resideInAPackage(ROOT + ".decision..")
        .should()
        .onlyDependOnClassesThat()
        .resideInAnyPackage(ROOT + ".decision..", "java..")
        .check(operator);
  }

  /**
   * A test helper never takes a main class's simple name, so that a reader who meets it in a test
   * need not look at the imports to know which one it is (a test of the class, {@code NameTest} or
   * {@code NameIT}, has a name of its own). A test type, top-level or nested, takes no main
   * top-level class's name, and a test's top-level class no main type's; two nested types named for
   * their role ({@code Result}, {@code Request}), each read with its outer class anywhere else, may
   * share one.
   */
  @Test
  void noTestTypeSharesASimpleNameWithAMainClass() {
    JavaClasses tests =
        new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.ONLY_INCLUDE_TESTS)
            .importPackages(ROOT);
    Set<String> mainTopLevel = named(operator.stream().filter(JavaClass::isTopLevelClass));
    Set<String> mainAll = named(operator.stream());

    List<String> clashes =
        tests.stream()
            .filter(c -> !c.getSimpleName().isEmpty() && !c.getSimpleName().equals("package-info"))
            .filter(c -> !c.getSimpleName().endsWith("Test") && !c.getSimpleName().endsWith("IT"))
            .filter(
                c ->
                    mainTopLevel.contains(c.getSimpleName())
                        || c.isTopLevelClass() && mainAll.contains(c.getSimpleName()))
            .map(JavaClass::getName)
            .sorted()
            .toList();
    assertThat(clashes).as("test types named like a main class").isEmpty();
  }

  /**
   * Every package of the operator says its job where a reader of the package looks first: a {@code
   * package-info.java} whose Javadoc DESIGN.md's map can point to.
   */
  @Test
  void everyPackageSaysItsJobInItsPackageInfo() {
    Path sources = Path.of("src/main/java");
    Set<String> packages =
        operator.stream().map(JavaClass::getPackageName).collect(Collectors.toSet());
    List<String> silent =
        packages.stream()
            .filter(
                name -> {
                  Path info = sources.resolve(name.replace('.', '/')).resolve("package-info.java");
                  try {
                    return !Files.exists(info) || !Files.readString(info).contains("/**");
                  } catch (IOException e) {
                    throw new UncheckedIOException(e);
                  }
                })
            .sorted()
            .toList();
    assertThat(silent).as("packages without a package-info.java Javadoc").isEmpty();
  }

  private static Set<String> named(Stream<JavaClass> classes) {
    return classes
        .map(JavaClass::getSimpleName)
        .filter(name -> !name.isEmpty())
        .collect(Collectors.toSet());
  }
}
