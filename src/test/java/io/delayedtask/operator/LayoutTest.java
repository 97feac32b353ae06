package io.delayedtask.operator;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.library.Architectures.layeredArchitecture;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

/**
 * The folders of DESIGN.md depend one way only: the reconciler (with the threads that run it) on
 * the leader's duties and on the sink's delivery, all of them on the shared task rules and the
 * Redis schedule, everything on the API types; nothing back. The parts of a decision ({@code
 * decision/}) lie below both the decider and the sink's delivery, which decide in those types and
 * never import each other the wrong way: {@code sink/} answers the decider with a plan made of them,
 * never importing {@code reconcile/}; {@code decision/} imports nothing of the operator's. {@code
 * leader/} hands claims to the reconciler through callbacks, never importing it or its thread pool.
 */
class LayoutTest {
  private static final String ROOT = "io.delayedtask.operator";

  private final JavaClasses operator = new ClassFileImporter()
      .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
      .importPackages(ROOT);

  @Test
  void foldersDependOneWay() {
    layeredArchitecture().consideringOnlyDependenciesInLayers()
        .layer("process").definedBy(ROOT)
        .layer("http").definedBy(ROOT + ".http..")
        .layer("reconcile").definedBy(ROOT + ".reconcile..")
        .layer("leader").definedBy(ROOT + ".leader..")
        .layer("task").definedBy(ROOT + ".task..")
        .layer("schedule").definedBy(ROOT + ".schedule..")
        .layer("sink").definedBy(ROOT + ".sink..")
        .layer("decision").definedBy(ROOT + ".decision..")
        .layer("trace").definedBy(ROOT + ".trace..")
        .layer("config").definedBy(ROOT + ".config..")
        .layer("api").definedBy(ROOT + ".api..")
        .whereLayer("process").mayNotBeAccessedByAnyLayer()
        .whereLayer("http").mayOnlyBeAccessedByLayers("process")
        .whereLayer("reconcile").mayOnlyBeAccessedByLayers("process")
        .whereLayer("leader").mayOnlyBeAccessedByLayers("process", "reconcile")
        .whereLayer("task").mayOnlyBeAccessedByLayers("process", "reconcile", "leader", "sink", "trace")
        .whereLayer("schedule").mayOnlyBeAccessedByLayers("process", "reconcile", "leader", "sink")
        .whereLayer("sink").mayOnlyBeAccessedByLayers("process", "reconcile")
        .whereLayer("decision").mayOnlyBeAccessedByLayers("process", "reconcile", "sink")
        .whereLayer("trace").mayOnlyBeAccessedByLayers("process", "reconcile", "sink")
        .whereLayer("config").mayOnlyBeAccessedByLayers("process", "schedule", "task", "sink", "reconcile", "trace")
        .check(operator);
  }

  @Test
  void theDecisionsVocabularyDependsOnNothingOfTheOperators() {
    classes().that().resideInAPackage(ROOT + ".decision..")
        .should().onlyDependOnClassesThat().resideInAnyPackage(ROOT + ".decision..", "java..")
        .check(operator);
  }
}
