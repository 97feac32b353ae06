package io.delayedtask.operator.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.DelayedTaskSpec;
import io.delayedtask.operator.api.v1alpha1.Phase;
import io.delayedtask.operator.decision.ClaimVerdict;
import io.delayedtask.operator.decision.ScheduleChange;
import io.delayedtask.operator.decision.TaskEvent;
import io.delayedtask.operator.leader.ScheduleIds;
import io.delayedtask.operator.reconcile.TaskDecider.JobCreation;
import io.delayedtask.operator.schedule.ClaimedEntry;
import io.delayedtask.operator.sink.SinkSpecRules;
import io.delayedtask.operator.task.job.JobNames;
import io.delayedtask.operator.task.lifetime.SecondsSetting;
import io.delayedtask.operator.task.spec.SpecValidator;
import io.delayedtask.operator.task.status.FireNow;
import io.delayedtask.operator.task.status.TaskState;
import io.delayedtask.operator.testing.Tasks;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * The annotation delayedtask.io/fire-now, decided as {@link TaskDeciderTest} decides the rest: a
 * plain function of the task, a claim and a fixed time.
 */
class FireNowDecisionsTest {
  private static final Instant NOW = Instant.parse("2026-12-03T07:00:00Z");
  private static final Instant TOMORROW = NOW.plusSeconds(86_400);
  private static final String FIRE_AT = "2026-12-03T06:59:59.5Z";
  private static final Instant FIRE_DUE = Instant.parse(FIRE_AT);

  private final TaskDecider decider =
      new TaskDecider(
          new SpecValidator(SinkSpecRules.defaults()),
          SecondsSetting.finishedTtl(Optional.empty()));
  private final SpecValidator validator = new SpecValidator(SinkSpecRules.defaults());
  private final Map<String, Job> jobs = new HashMap<>();

  @Test
  void aScheduledTaskFiresAtOnceAsIfTheAnnotationsTimeWereItsDueTimeAndRecordsTheValue() {
    DelayedTask task = scheduled(task(s -> s.setRunAt(TOMORROW.toString())));
    annotate(task, FIRE_AT);

    Plan noticed = decide(task, Optional.empty());
    assertThat(noticed.schedule())
        .as("the entry due now, so the leader claims it at once")
        .isEqualTo(new ScheduleChange.Write(FIRE_DUE));
    assertThat(noticed.status().getDueTime()).isEqualTo("2026-12-03T06:59:59.500Z");
    assertThat(noticed.status().getFireNowHandled()).as("not yet fired").isNull();
    task.setStatus(noticed.status());

    Plan fired = decide(task, Optional.of(claim(task, NOW)));
    assertThat(fired.status().getPhase()).isEqualTo(Phase.Fired);
    assertThat(fired.status().getFireNowHandled()).isEqualTo(FIRE_AT);
    assertThat(fired.events())
        .extracting(TaskEvent::reason)
        .contains(TaskEvents.FIRE_NOW, TaskEvents.FIRED);
    task.setStatus(fired.status());

    Plan again = decide(task, Optional.empty());
    assertThat(again.status()).as("once per value: nothing changes").isEqualTo(task.getStatus());
    assertThat(again.events()).isEmpty();

    task.getMetadata()
        .getAnnotations()
        .remove(FireNow.ANNOTATION); // a re-apply without the annotation
    Plan reapplied = decide(task, Optional.empty());
    assertThat(reapplied.status()).isEqualTo(task.getStatus());
    assertThat(reapplied.schedule()).isEqualTo(ScheduleChange.KEEP);
    assertThat(reapplied.events()).isEmpty();
  }

  @Test
  void aSuspendedJobTaskFiresItsJobNamedAfterTheAnnotationsTime() {
    DelayedTask task =
        scheduled(
            task(
                s -> {
                  s.setRunAt(TOMORROW.toString());
                  s.setSuspend(true);
                  s.setJobTemplate(Tasks.jobTemplate());
                }));
    assertThat(task.getStatus().getPhase()).isEqualTo(Phase.Suspended);
    annotate(task, FIRE_AT);
    assertThat(TaskState.waitingDue(task, validator))
        .as("the resync keeps its entry, suspended or not")
        .contains(FIRE_DUE);

    Plan noticed = decide(task, Optional.empty());
    assertThat(noticed.schedule()).isEqualTo(new ScheduleChange.Write(FIRE_DUE));
    assertThat(noticed.status().getPhase()).isEqualTo(Phase.Scheduled);
    task.setStatus(noticed.status());

    TaskFacts facts = new TaskFacts(task, jobs, Optional.of(claim(task, NOW)), NOW);
    Plan create = decider.decide(facts);
    assertThat(create.jobToCreate())
        .get()
        .extracting(j -> j.getMetadata().getName())
        .isEqualTo(JobNames.jobName("t", "uid-1", FIRE_DUE));
    Plan running =
        decider.decide(facts.withJobCreation(new JobCreation.Created(create.jobToCreate().get())));
    assertThat(running.status().getPhase()).isEqualTo(Phase.Running);
    assertThat(running.status().getFireNowHandled()).isEqualTo(FIRE_AT);
    task.setStatus(running.status());

    assertThat(decide(task, Optional.empty()).schedule())
        .as("suspended still, fired: nothing more")
        .isEqualTo(ScheduleChange.KEEP);
    assertThat(TaskState.waitingDue(task, validator)).isEmpty();
  }

  @Test
  void aTransientJobFailureLeavesTheValueUnhandledSoTheRetryFires() {
    DelayedTask task =
        scheduled(
            task(
                s -> {
                  s.setRunAt(TOMORROW.toString());
                  s.setJobTemplate(Tasks.jobTemplate());
                }));
    annotate(task, FIRE_AT);
    task.setStatus(decide(task, Optional.empty()).status());
    TaskFacts facts = new TaskFacts(task, jobs, Optional.of(claim(task, NOW)), NOW);

    Plan backoff = decider.decide(facts.withJobCreation(new JobCreation.Transient("x", "503")));

    assertThat(backoff.claim()).get().isInstanceOf(ClaimVerdict.Backoff.class);
    assertThat(backoff.status().getFireNowHandled()).isNull();
  }

  @Test
  void aFinishedTaskOnlyGetsAWarningOncePerValue() {
    DelayedTask task = scheduled(task(s -> s.setRunAt(NOW.minusSeconds(5).toString())));
    task.setStatus(decide(task, Optional.of(claim(task, NOW))).status());
    assertThat(task.getStatus().getPhase()).isEqualTo(Phase.Fired);
    annotate(task, FIRE_AT);

    Plan plan = decide(task, Optional.empty());

    assertThat(plan.status().getPhase()).isEqualTo(Phase.Fired);
    assertThat(plan.status().getFiredTime()).isEqualTo(task.getStatus().getFiredTime());
    assertThat(plan.schedule()).isEqualTo(ScheduleChange.KEEP);
    assertThat(plan.jobToCreate()).isEmpty();
    assertThat(plan.events())
        .singleElement()
        .satisfies(
            e -> {
              assertThat(e.warning()).isTrue();
              assertThat(e.reason()).isEqualTo(TaskEvents.FIRE_NOW_IGNORED);
              assertThat(e.message()).contains(FireNow.ANNOTATION, "fired already");
            });
    assertThat(plan.status().getFireNowHandled()).isEqualTo(FIRE_AT);
    task.setStatus(plan.status());
    assertThat(decide(task, Optional.empty()).events()).as("said once").isEmpty();
  }

  @Test
  void aValueThatIsNoTimeIsAWarningNamingTheAnnotationAndNothingFires() {
    for (String bad :
        new String[] {
          "now", "2026-12-03 07:00:00", "2026-12-03T07:00:00", "2026-02-30T07:00:00Z", ""
        }) {
      DelayedTask task = scheduled(task(s -> s.setRunAt(TOMORROW.toString())));
      annotate(task, bad);

      Plan plan = decide(task, Optional.empty());

      assertThat(plan.status().getPhase()).as(bad).isEqualTo(Phase.Scheduled);
      assertThat(plan.status().getDueTime()).as(bad).isEqualTo(task.getStatus().getDueTime());
      assertThat(plan.schedule()).as(bad).isEqualTo(ScheduleChange.KEEP);
      assertThat(plan.events())
          .as(bad)
          .singleElement()
          .satisfies(
              e -> {
                assertThat(e.warning()).isTrue();
                assertThat(e.reason()).isEqualTo(TaskEvents.FIRE_NOW_INVALID);
                assertThat(e.message()).contains(FireNow.ANNOTATION, "RFC 3339");
              });
      assertThat(TaskState.waitingDue(task, validator)).as(bad).contains(TOMORROW);
    }
  }

  @Test
  void aSecondDistinctValueAfterTheFirstFiredIsIgnoredWithAWarning() {
    DelayedTask task = scheduled(task(s -> s.setRunAt(TOMORROW.toString())));
    annotate(task, FIRE_AT);
    task.setStatus(decide(task, Optional.empty()).status());
    task.setStatus(decide(task, Optional.of(claim(task, NOW))).status());
    annotate(task, "2026-12-03T07:00:00Z");

    Plan plan = decide(task, Optional.empty());

    assertThat(plan.events())
        .extracting(TaskEvent::reason)
        .containsExactly(TaskEvents.FIRE_NOW_IGNORED);
    assertThat(plan.status().getDueTime()).isEqualTo("2026-12-03T06:59:59.500Z");
  }

  @Test
  void updatesReconcileOnANewGenerationOrAChangedFireNowOnly() {
    TaskUpdates updates = new TaskUpdates();
    DelayedTask before = task(s -> s.setRunAt(TOMORROW.toString()));
    DelayedTask statusOnly = task(s -> s.setRunAt(TOMORROW.toString()));
    assertThat(updates.accept(statusOnly, before)).as("its own status write").isFalse();
    DelayedTask annotated = task(s -> s.setRunAt(TOMORROW.toString()));
    annotate(annotated, FIRE_AT);
    assertThat(updates.accept(annotated, before)).isTrue();
    DelayedTask newGeneration = task(s -> s.setRunAt(NOW.toString()));
    newGeneration.getMetadata().setGeneration(4L);
    assertThat(updates.accept(newGeneration, before)).isTrue();
  }

  private Plan decide(DelayedTask task, Optional<ClaimedEntry> claim) {
    return decider.decide(new TaskFacts(task, jobs, claim, NOW));
  }

  private DelayedTask scheduled(DelayedTask task) {
    TaskFacts facts = new TaskFacts(task, jobs, Optional.empty(), NOW);
    Plan plan = decider.decide(facts);
    if (plan.jobToCheck().isPresent()) {
      plan = decider.decide(facts.withJobCheck(new TaskDecider.JobCheck.Accepted()));
    }
    task.setStatus(plan.status());
    return task;
  }

  private static void annotate(DelayedTask task, String value) {
    Map<String, String> annotations =
        task.getMetadata().getAnnotations() == null
            ? new HashMap<>()
            : new HashMap<>(task.getMetadata().getAnnotations());
    annotations.put(FireNow.ANNOTATION, value);
    task.getMetadata().setAnnotations(annotations);
  }

  private static DelayedTask task(Consumer<DelayedTaskSpec> spec) {
    DelayedTask task = Tasks.task("ns", "t", spec);
    task.setMetadata(
        new ObjectMetaBuilder(task.getMetadata())
            .withUid("uid-1")
            .withGeneration(3L)
            .withCreationTimestamp("2026-12-03T06:00:00Z")
            .build());
    return task;
  }

  private static ClaimedEntry claim(DelayedTask task, Instant claimedAt) {
    Instant due = Instant.parse(task.getStatus().getDueTime());
    return new ClaimedEntry(ScheduleIds.idOf(task), due, claimedAt, "op:0:1", System.nanoTime());
  }
}
