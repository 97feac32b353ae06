package io.delayedtask.operator.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.DelayedTaskSpec;
import io.delayedtask.operator.api.v1alpha1.Phase;
import io.delayedtask.operator.testing.ApiFault;
import io.delayedtask.operator.testing.RequiresLoopbackOnlyNetwork;
import io.delayedtask.operator.testing.Tasks;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Manifests written by hand, table-driven, against one operator process: each bad one gets its
 * phase and a message naming the field, and a valid task created right after it still fires. The
 * mock API server enforces neither the CRD's patterns nor its CEL rules, so everything reaches the
 * operator, as with an API server that does not enforce CEL.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@RequiresLoopbackOnlyNetwork
class BadInputIT {
  private static final String JOBS = "/apis/batch/v1/namespaces/[^/]+/jobs";
  private FaultLab lab;

  /** One row: a task name, how its spec is written, and what the operator must say. */
  record Case(
      String name,
      Consumer<DelayedTaskSpec> spec,
      Phase phase,
      List<String> messageContains,
      Integer injectedCode) {
    @Override
    public String toString() {
      return name;
    }
  }

  @BeforeAll
  void start() {
    lab = FaultLab.start(getClass().getSimpleName());
    lab.startOperator("op-a");
    lab.awaitLiveLeader(Duration.ofSeconds(60));
  }

  @AfterAll
  void stop() {
    lab.close();
  }

  static Stream<Case> badInput() {
    return Stream.of(
        new Case(
            "words-for-a-time",
            s -> s.setRunAt("next tuesday at noon"),
            Phase.Invalid,
            List.of("spec.runAt", "RFC 3339"),
            null),
        new Case(
            "february-thirtieth",
            s -> s.setRunAt("2026-02-30T10:00:00Z"),
            Phase.Invalid,
            List.of("spec.runAt"),
            null),
        new Case(
            "no-time-zone",
            s -> s.setRunAt("2026-12-03T07:00:00"),
            Phase.Invalid,
            List.of("spec.runAt"),
            null),
        new Case(
            "garbage-delay", s -> s.setDelay("soon"), Phase.Invalid, List.of("spec.delay"), null),
        new Case(
            "negative-delay", s -> s.setDelay("-5m"), Phase.Invalid, List.of("spec.delay"), null),
        new Case(
            "huge-delay",
            s -> s.setDelay("99999999999h"),
            Phase.Invalid,
            List.of("spec.delay"),
            null),
        new Case(
            "both-runat-and-delay",
            s -> {
              s.setRunAt("2030-01-01T00:00:00Z");
              s.setDelay("10m");
            },
            Phase.Invalid,
            List.of("spec.runAt", "spec.delay"),
            null),
        new Case(
            "neither-runat-nor-delay",
            s -> {},
            Phase.Invalid,
            List.of("spec.runAt", "spec.delay"),
            null),
        new Case(
            "template-in-another-namespace",
            s -> {
              s.setRunAt("2030-01-01T00:00:00Z");
              s.setJobTemplate(Tasks.jobTemplate());
              s.getJobTemplate().getMetadata().setNamespace("elsewhere");
            },
            Phase.Invalid,
            List.of("spec.jobTemplate.metadata.namespace"),
            null),
        new Case(
            "template-too-big-422",
            s -> {
              s.setDelay("1s");
              s.setJobTemplate(Tasks.jobTemplate());
            },
            Phase.Failed,
            List.of("Too long"),
            422),
        new Case(
            "template-too-big-413",
            s -> {
              s.setDelay("1s");
              s.setJobTemplate(Tasks.jobTemplate());
            },
            Phase.Failed,
            List.of("too large"),
            413));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("badInput")
  void eachBadTaskGetsItsPhaseAndMessageAndAValidOneStillFires(Case row) {
    if (row.injectedCode() != null) {
      // The API server refuses this task's Job (too big for it): simulated for this Job only.
      lab.api.inject(
          ApiFault.of("POST", JOBS, row.injectedCode(), -1)
              .whenBodyContains("\"delayedtask.io/task\":\"" + row.name() + "\""));
    }
    lab.create(Tasks.task(FaultLab.NAMESPACE, row.name(), row.spec()));

    await(row.name() + " is " + row.phase())
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(() -> assertThat(lab.phaseOf(row.name())).isEqualTo(row.phase()));
    DelayedTask task = lab.get(row.name());
    assertThat(task.getStatus().getMessage()).as("status.message").isNotBlank();
    for (String fragment : row.messageContains()) {
      assertThat(task.getStatus().getMessage()).containsIgnoringCase(fragment);
    }
    if (row.phase() == Phase.Invalid) {
      assertThat(task.getStatus().getFiredTime()).isNull();
    }
    assertThat(lab.client().batch().v1().jobs().inNamespace(FaultLab.NAMESPACE).list().getItems())
        .noneMatch(job -> job.getMetadata().getName().startsWith(row.name()));

    aValidTaskStillFires("valid-after-" + row.name());
  }

  @Test
  void year9999IsScheduledToTheMillisecond() {
    lab.create(
        Tasks.task(FaultLab.NAMESPACE, "year-9999", s -> s.setRunAt("9999-12-31T23:59:59Z")));

    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(() -> assertThat(lab.phaseOf("year-9999")).isEqualTo(Phase.Scheduled));
    assertThat(lab.get("year-9999").getStatus().getDueTime()).isEqualTo("9999-12-31T23:59:59.000Z");
    assertThat(lab.get("year-9999").getStatus().getFiredTime()).isNull();

    aValidTaskStillFires("valid-after-year-9999");
  }

  @Test
  void aLongButValidDelayIsScheduled() {
    lab.create(Tasks.task(FaultLab.NAMESPACE, "ten-years", s -> s.setDelay("87600h")));

    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(() -> assertThat(lab.phaseOf("ten-years")).isEqualTo(Phase.Scheduled));
    Instant created = Instant.parse(lab.get("ten-years").getMetadata().getCreationTimestamp());
    assertThat(Instant.parse(lab.get("ten-years").getStatus().getDueTime()))
        .isEqualTo(created.plus(Duration.ofHours(87_600)));
  }

  @Test
  void aNameTooLongForAJobNameIsShortenedAndStillFiresOnce() {
    String name = "a-very-long-task-name-" + "x".repeat(200) + "-end";
    lab.create(Tasks.withJob(FaultLab.NAMESPACE, name, Instant.now().plusSeconds(1)));

    lab.awaitAllFiredOnceNotEarly(List.of(name), Duration.ofSeconds(60));
    DelayedTask task = lab.get(name);
    Job job =
        lab.client()
            .batch()
            .v1()
            .jobs()
            .inNamespace(FaultLab.NAMESPACE)
            .withName(task.getStatus().getJobName())
            .get();
    assertThat(job.getMetadata().getName())
        .hasSizeLessThanOrEqualTo(63)
        .matches("[a-z0-9]([-a-z0-9]*[a-z0-9])?")
        .startsWith("a-very-long-task-name-xxx")
        .matches(".*-[0-9a-f]{8}");
    assertThat(job.getMetadata().getLabels().get("delayedtask.io/task"))
        .hasSizeLessThanOrEqualTo(63);
    assertThat(job.getMetadata().getLabels())
        .containsEntry("delayedtask.io/task-uid", task.getMetadata().getUid());
  }

  private void aValidTaskStillFires(String name) {
    lab.create(Tasks.statusOnly(FaultLab.NAMESPACE, name, Instant.now().plusSeconds(1)));
    lab.awaitAllFiredOnceNotEarly(List.of(name), Duration.ofSeconds(60));
  }
}
