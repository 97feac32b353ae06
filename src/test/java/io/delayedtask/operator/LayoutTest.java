package io.delayedtask.operator;

import static com.tngtech.archunit.library.Architectures.layeredArchitecture;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

/**
 * The folders of DESIGN.md depend one way only: the reconciler (with the threads that run it) on
 * the leader's duties and on the sink's delivery, all of them on the shared task rules and the
 * Redis schedule, everything on the API types; nothing back. {@code sink/} holds all of a sink
 * task's delivery and answers the reconciler's decider with its own {@code DeliveryStep}, never
 * importing it; {@code leader/} hands claims to the reconciler through callbacks, never importing
 * it or its thread pool.
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
        .whereLayer("trace").mayOnlyBeAccessedByLayers("process", "reconcile", "sink")
        .whereLayer("config").mayOnlyBeAccessedByLayers("process", "schedule", "task", "sink", "reconcile", "trace")
        .check(operator);
  }
}
