package io.delayedtask.operator.reconcile;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import io.delayedtask.operator.api.v1alpha1.Condition;
import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.DelayedTaskSpec;
import io.delayedtask.operator.api.v1alpha1.Phase;
import io.delayedtask.operator.decision.ClaimOutcome;
import io.delayedtask.operator.decision.ClaimVerdict;
import io.delayedtask.operator.decision.DeliveryCount;
import io.delayedtask.operator.decision.ScheduleChange;
import io.delayedtask.operator.decision.TaskEvent;
import io.delayedtask.operator.leader.ScheduleIds;
import io.delayedtask.operator.reconcile.TaskDecider.JobCheck;
import io.delayedtask.operator.reconcile.TaskDecider.JobCreation;
import io.delayedtask.operator.schedule.ClaimedEntry;
import io.delayedtask.operator.sink.DeliveryAttempt;
import io.delayedtask.operator.sink.DeliveryDecisions;
import io.delayedtask.operator.sink.DeliveryOutcome;
import io.delayedtask.operator.sink.SinkSpecRules;
import io.delayedtask.operator.task.job.JobFactory;
import io.delayedtask.operator.task.job.JobNames;
import io.delayedtask.operator.task.job.TaskLabels;
import io.delayedtask.operator.task.lifetime.SecondsSetting;
import io.delayedtask.operator.task.spec.SpecValidator;
import io.delayedtask.operator.task.status.Conditions;
import io.delayedtask.operator.task.status.TaskState;
import io.delayedtask.operator.task.time.Times;
import io.delayedtask.operator.testing.Tasks;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobConditionBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.JobStatusBuilder;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * Every branch of what a reconcile decides, as a plain function of the task, its Jobs, the claim
 * and a fixed time: no API server, no Redis, no clock. The slower tiers only prove the wiring.
 */
class TaskDeciderTest {
  private static final Instant NOW = Instant.parse("2026-12-03T07:00:00Z");
  private static final Instant DUE = NOW.minusMillis(20);
  private static final Instant LATER = NOW.plusSeconds(3600);

  private final TaskDecider decider =
      new TaskDecider(
          new SpecValidator(SinkSpecRules.defaults()),
          SecondsSetting.finishedTtl(Optional.empty()));
  private final Map<String, Job> jobs = new HashMap<>();

  // --- Scheduling, suspend, invalid input -------------------------------------------------------

  @Test
  void aNewTaskIsScheduledAndItsEntryWritten() {
    Plan plan = decide(task(s -> s.setRunAt(LATER.toString())), Optional.empty());

    assertThat(plan.schedule()).isEqualTo(new ScheduleChange.Write(LATER));
    assertThat(plan.status().getPhase()).isEqualTo(Phase.Scheduled);
    assertThat(plan.status().getDueTime()).isEqualTo("2026-12-03T08:00:00.000Z");
    assertThat(plan.status().getObservedGeneration()).isEqualTo(3L);
    assertThat(condition(plan, Condition.SCHEDULED)).isEqualTo("True");
    assertThat(condition(plan, Condition.READY)).isEqualTo("True");
    assertThat(plan.events())
        .containsExactly(
            TaskEvent.normal(
                TaskEvents.SCHEDULED, "Scheduled to fire at 2026-12-03T08:00:00.000Z"));
    assertThat(plan.claim()).isEmpty();
    assertThat(plan.jobToCreate()).isEmpty();
  }

  @Test
  void aTaskAlreadyScheduledForItsDueTimeCostsNothing() {
    DelayedTask task = task(s -> s.setRunAt(LATER.toString()));
    task.setStatus(decide(task, Optional.empty()).status());

    Plan again = decide(task, Optional.empty());

    assertThat(again.schedule())
        .as("the entry was written before the status said so")
        .isEqualTo(ScheduleChange.KEEP);
    assertThat(again.status()).as("no status write").isEqualTo(task.getStatus());
    assertThat(again.events()).isEmpty();
  }

  @Test
  void aNewDueTimeMovesTheEntryAndForgetsThePreviousFiring() {
    DelayedTask task = fired(task(s -> s.setRunAt(DUE.toString())));
    task.getSpec().setRunAt(LATER.toString());
    task.getMetadata().setGeneration(4L); // what the API server does on a spec change

    Plan plan = decide(task, Optional.empty());

    assertThat(plan.schedule()).isEqualTo(new ScheduleChange.Write(LATER));
    assertThat(plan.status().getPhase()).isEqualTo(Phase.Scheduled);
    assertThat(plan.status().getFiredTime()).isNull();
    assertThat(Conditions.find(plan.status(), Condition.FIRED)).isEmpty();
    assertThat(plan.events()).extracting(TaskEvent::reason).containsExactly(TaskEvents.SCHEDULED);
  }

  @Test
  void aSuspendedTaskLosesItsEntryOnceAndGetsItBackWhenResumed() {
    DelayedTask task =
        task(
            s -> {
              s.setRunAt(LATER.toString());
              s.setSuspend(true);
            });
    Plan suspended = decide(task, Optional.empty());
    assertThat(suspended.schedule()).isEqualTo(ScheduleChange.REMOVE);
    assertThat(suspended.status().getPhase()).isEqualTo(Phase.Suspended);
    assertThat(suspended.events())
        .extracting(TaskEvent::reason)
        .containsExactly(TaskEvents.SUSPENDED);

    task.setStatus(suspended.status());
    assertThat(decide(task, Optional.empty()).schedule()).isEqualTo(ScheduleChange.KEEP);

    task.getSpec().setSuspend(false);
    Plan resumed = decide(task, Optional.empty());
    assertThat(resumed.schedule()).isEqualTo(new ScheduleChange.Write(LATER));
    assertThat(resumed.status().getPhase()).isEqualTo(Phase.Scheduled);
  }

  @Test
  void anInvalidSpecIsReportedOnceWithTheFieldAndItsEntryRemoved() {
    DelayedTask task =
        task(
            s -> {
              s.setRunAt(LATER.toString());
              s.setDelay("10m");
            });
    task.setStatus(decide(task(s -> s.setRunAt(LATER.toString())), Optional.empty()).status());
    task.getMetadata().setGeneration(4L); // the spec changed after that status was written

    Plan invalid = decide(task, Optional.empty());
    assertThat(invalid.schedule()).isEqualTo(ScheduleChange.REMOVE);
    assertThat(invalid.status().getPhase()).isEqualTo(Phase.Invalid);
    assertThat(invalid.status().getDueTime()).isNull();
    assertThat(invalid.status().getMessage()).contains("spec.runAt and spec.delay are both set");
    assertThat(condition(invalid, Condition.STALLED)).isEqualTo("True");
    assertThat(invalid.events())
        .containsExactly(TaskEvent.warning(TaskEvents.INVALID, invalid.status().getMessage()));

    task.setStatus(invalid.status());
    Plan same = decide(task, Optional.empty());
    assertThat(same.schedule()).isEqualTo(ScheduleChange.KEEP);
    assertThat(same.events()).isEmpty();

    task.getSpec().setRunAt(null);
    task.getSpec().setDelay("-5m");
    task.getMetadata().setGeneration(5L);
    assertThat(decide(task, Optional.empty()).events())
        .as("a new reason is a new Event")
        .extracting(TaskEvent::reason)
        .containsExactly(TaskEvents.INVALID);
  }

  @Test
  void anOverdueTaskWithoutAClaimWaitsForTheLeadersClaim() {
    Plan plan = decide(task(s -> s.setRunAt(DUE.toString())), Optional.empty());

    assertThat(plan.status().getPhase()).isEqualTo(Phase.Scheduled);
    assertThat(plan.status().getFiredTime()).isNull();
    assertThat(plan.schedule()).isEqualTo(new ScheduleChange.Write(DUE));
  }

  // --- Firing on a claim
  // --------------------------------------------------------------------------

  @Test
  void aClaimFiresAStatusOnlyTaskAtThisTime() {
    DelayedTask task = scheduled(task(s -> s.setRunAt(DUE.toString())));
    ClaimedEntry claim = claim(task, DUE.plusMillis(3));

    Plan plan = decide(task, Optional.of(claim));

    assertThat(plan.status().getPhase()).isEqualTo(Phase.Fired);
    assertThat(plan.status().getFiredTime()).isEqualTo(Times.format(NOW));
    assertThat(condition(plan, Condition.FIRED)).isEqualTo("True");
    assertThat(condition(plan, Condition.SCHEDULED)).isEqualTo("False");
    assertThat(plan.schedule())
        .as("the claim is acknowledged, not the entry rewritten")
        .isEqualTo(ScheduleChange.KEEP);
    assertThat(plan.claim())
        .contains(new ClaimVerdict.Settle(ClaimOutcome.FIRED, Optional.of(Duration.ofMillis(3))));
    assertThat(plan.events())
        .containsExactly(
            TaskEvent.normal(
                TaskEvents.FIRED,
                "Fired at 2026-12-03T07:00:00.000Z (due 2026-12-03T06:59:59.980Z)"));
  }

  @Test
  void aClaimOfATaskNotReconciledYetFiresIt() {
    DelayedTask task = task(s -> s.setRunAt(DUE.toString()));

    Plan plan = decide(task, Optional.of(claim(task, DUE)));

    assertThat(plan.status().getPhase()).isEqualTo(Phase.Fired);
    assertThat(plan.claim())
        .map(ClaimVerdict.Settle.class::cast)
        .map(ClaimVerdict.Settle::outcome)
        .contains(ClaimOutcome.FIRED);
  }

  @Test
  void aClaimForADueTimeMovedLaterIsHandedBackUntilThen() {
    DelayedTask task = scheduled(task(s -> s.setRunAt(DUE.toString())));
    ClaimedEntry claim = claim(task, DUE);
    task.getSpec().setRunAt(LATER.toString());
    task.getMetadata().setGeneration(4L);

    Plan plan = decide(task, Optional.of(claim));

    assertThat(plan.claim()).contains(new ClaimVerdict.HandBack(LATER, Optional.empty()));
    assertThat(plan.status().getPhase()).isEqualTo(Phase.Scheduled);
    assertThat(plan.status().getDueTime()).isEqualTo(Times.format(LATER));
    assertThat(plan.schedule()).isEqualTo(new ScheduleChange.Write(LATER));
  }

  @Test
  void aClaimThisClockCallsEarlyIsHandedBackByTheSkewNeverFired() {
    // Redis's clock reached the due time; this process's clock is 250 ms behind it.
    Instant due = NOW.plusMillis(250);
    DelayedTask task = scheduled(task(s -> s.setRunAt(due.toString())));
    ClaimedEntry claim = claim(task, due.plusMillis(1));

    Plan plan = decide(task, Optional.of(claim));

    assertThat(plan.claim())
        .contains(
            new ClaimVerdict.HandBack(
                claim.claimedAt().plusMillis(250), Optional.of(ClaimOutcome.CLOCK_SKEW)));
    assertThat(plan.status().getPhase()).isEqualTo(Phase.Scheduled);
    assertThat(plan.status().getFiredTime()).isNull();
  }

  @Test
  void pastTheStartingDeadlineNothingFiresAndTheTaskIsMissed() {
    DelayedTask task =
        scheduled(
            task(
                s -> {
                  s.setRunAt(DUE.toString());
                  s.setStartingDeadlineSeconds(30L);
                  s.setJobTemplate(Tasks.jobTemplate());
                }));

    Plan plan = decide(task, Optional.of(claim(task, DUE.plusSeconds(31))));

    assertThat(plan.status().getPhase()).isEqualTo(Phase.Missed);
    assertThat(plan.status().getMessage()).contains("startingDeadlineSeconds=30");
    assertThat(plan.jobToCreate()).isEmpty();
    assertThat(plan.claim()).contains(ClaimVerdict.Settle.as(ClaimOutcome.MISSED));
    assertThat(plan.events()).extracting(TaskEvent::reason).containsExactly(TaskEvents.MISSED);
  }

  /**
   * A deadline beyond Instant's range used to throw DateTimeException in every decision of the
   * claim, which then went back with backoff for ever: now such a spec is Invalid and its claim is
   * acknowledged.
   */
  @Test
  void aClaimOfATaskWhoseDeadlineIsBeyondTenYearsIsSettledAndTheTaskInvalid() {
    DelayedTask task =
        scheduled(
            task(
                s -> {
                  s.setRunAt(DUE.toString());
                  s.setStartingDeadlineSeconds(40_000_000_000_000_000L);
                  s.setJobTemplate(Tasks.jobTemplate());
                }));

    Plan plan = decide(task, Optional.of(claim(task, DUE)));

    assertThat(plan.status().getPhase()).isEqualTo(Phase.Invalid);
    assertThat(plan.status().getMessage())
        .contains(
            "spec.startingDeadlineSeconds is 40000000000000000; use a number "
                + "of seconds from 0 to 315360000");
    assertThat(plan.claim()).contains(ClaimVerdict.Settle.stale());
    assertThat(plan.jobToCreate()).isEmpty();
  }

  @Test
  void theOperatorWideDefaultDeadlineAppliesToATaskThatSetsNone() {
    TaskDecider withDefault =
        new TaskDecider(
            new SpecValidator(SinkSpecRules.defaults()),
            SecondsSetting.finishedTtl(Optional.empty()),
            SecondsSetting.startingDeadline(Optional.of(60L)));
    DelayedTask task =
        scheduled(
            task(
                s -> {
                  s.setRunAt(DUE.toString());
                  s.setJobTemplate(Tasks.jobTemplate());
                }));

    Plan late = withDefault.decide(facts(task, Optional.of(claim(task, DUE.plusSeconds(61)))));
    assertThat(late.status().getPhase()).isEqualTo(Phase.Missed);
    assertThat(late.status().getMessage()).contains("startingDeadlineSeconds=60");
    assertThat(late.jobToCreate()).isEmpty();
    assertThat(
            withDefault
                .decide(facts(task, Optional.of(claim(task, DUE.plusSeconds(59)))))
                .jobToCreate())
        .isPresent();
    assertThat(decide(task, Optional.of(claim(task, DUE.plusSeconds(61)))).jobToCreate())
        .as("without the default, no deadline")
        .isPresent();
  }

  @Test
  void aTasksOwnDeadlineWinsOverTheOperatorWideDefault() {
    TaskDecider withDefault =
        new TaskDecider(
            new SpecValidator(SinkSpecRules.defaults()),
            SecondsSetting.finishedTtl(Optional.empty()),
            SecondsSetting.startingDeadline(Optional.of(60L)));
    DelayedTask task =
        scheduled(
            task(
                s -> {
                  s.setRunAt(DUE.toString());
                  s.setStartingDeadlineSeconds(600L);
                }));

    assertThat(
            withDefault
                .decide(facts(task, Optional.of(claim(task, DUE.plusSeconds(61)))))
                .status()
                .getPhase())
        .isEqualTo(Phase.Fired);
  }

  @Test
  void withinTheStartingDeadlineItFires() {
    DelayedTask task =
        scheduled(
            task(
                s -> {
                  s.setRunAt(DUE.toString());
                  s.setStartingDeadlineSeconds(30L);
                }));

    assertThat(decide(task, Optional.of(claim(task, DUE.plusSeconds(29)))).status().getPhase())
        .isEqualTo(Phase.Fired);
  }

  @Test
  void pastTheDeadlineAJobThatExistsIsRunningNeverMissed() {
    DelayedTask task =
        scheduled(
            task(
                s -> {
                  s.setRunAt(DUE.toString());
                  s.setStartingDeadlineSeconds(30L);
                  s.setJobTemplate(Tasks.jobTemplate());
                }));
    Job earlier =
        JobFactory.jobFor(task, DUE, DUE.plusMillis(7)); // created; its status write was lost
    jobs.put(earlier.getMetadata().getName(), earlier);

    Plan plan = decide(task, Optional.of(claim(task, DUE.plusSeconds(90))));

    assertThat(plan.status().getPhase()).isEqualTo(Phase.Running);
    assertThat(plan.status().getJobName()).isEqualTo(earlier.getMetadata().getName());
    assertThat(plan.status().getFiredTime())
        .as("the Job's own firing time")
        .isEqualTo(Times.format(DUE.plusMillis(7)));
    assertThat(plan.claim())
        .map(ClaimVerdict.Settle.class::cast)
        .map(ClaimVerdict.Settle::outcome)
        .contains(ClaimOutcome.JOB_CREATED);
  }

  @Test
  void aJobTaskNamesItsDeterministicJobAndWaitsForTheApiServersAnswer() {
    DelayedTask task =
        scheduled(
            task(
                s -> {
                  s.setRunAt(DUE.toString());
                  s.setJobTemplate(Tasks.jobTemplate());
                }));

    Plan plan = decide(task, Optional.of(claim(task, DUE)));

    assertThat(plan.jobToCreate()).isPresent();
    Job job = plan.jobToCreate().get();
    assertThat(job.getMetadata().getName()).isEqualTo(JobNames.jobName("t", "uid-1", DUE));
    assertThat(job.getMetadata().getAnnotations())
        .containsEntry(TaskLabels.DUE_TIME, Times.format(DUE))
        .containsEntry(TaskLabels.FIRED_TIME, Times.format(NOW));
    assertThat(plan.status().getPhase())
        .as("not Running before the Job exists")
        .isEqualTo(Phase.Scheduled);
    assertThat(plan.claim()).isEmpty();
    assertThat(plan.events()).isEmpty();
  }

  @Test
  void aCreatedJobMakesTheTaskRunning() {
    DelayedTask task =
        scheduled(
            task(
                s -> {
                  s.setRunAt(DUE.toString());
                  s.setJobTemplate(Tasks.jobTemplate());
                }));
    TaskFacts facts = facts(task, Optional.of(claim(task, DUE)));
    Plan planned = decider.decide(facts);

    Plan plan =
        decider.decide(facts.withJobCreation(new JobCreation.Created(planned.jobToCreate().get())));

    assertThat(plan.status().getPhase()).isEqualTo(Phase.Running);
    assertThat(plan.status().getJobName())
        .isEqualTo(planned.jobToCreate().get().getMetadata().getName());
    assertThat(plan.status().getFiredTime()).isEqualTo(Times.format(NOW));
    assertThat(condition(plan, Condition.RECONCILING)).isEqualTo("True");
    assertThat(plan.claim())
        .map(ClaimVerdict.Settle.class::cast)
        .map(ClaimVerdict.Settle::outcome)
        .contains(ClaimOutcome.JOB_CREATED);
    assertThat(plan.events())
        .as("JobCreated goes with the status write that records Running")
        .extracting(TaskEvent::reason, TaskEvent::message)
        .containsExactly(
            tuple(
                TaskEvents.JOB_CREATED,
                "Created Job " + plan.status().getJobName() + " (due " + Times.format(DUE) + ")"));
  }

  @Test
  void aJobOfThatNameControlledBySomethingElseFailsTheTaskAndIsLeftAlone() {
    DelayedTask task =
        scheduled(
            task(
                s -> {
                  s.setRunAt(DUE.toString());
                  s.setJobTemplate(Tasks.jobTemplate());
                }));
    TaskFacts facts = facts(task, Optional.of(claim(task, DUE)));
    Plan planned = decider.decide(facts);

    Plan plan = decider.decide(facts.withJobCreation(new JobCreation.Foreign("t-12345678")));

    assertThat(plan.status().getPhase()).isEqualTo(Phase.Failed);
    assertThat(plan.status().getMessage())
        .contains("t-12345678")
        .contains("not controlled by this task");
    assertThat(plan.claim()).contains(ClaimVerdict.Settle.as(ClaimOutcome.FAILED));
    assertThat(plan.events()).extracting(TaskEvent::reason).containsExactly(TaskEvents.FAILED);
  }

  @Test
  void aJobTheApiServerRefusesFailsTheTaskWithItsReason() {
    DelayedTask task =
        scheduled(
            task(
                s -> {
                  s.setRunAt(DUE.toString());
                  s.setJobTemplate(Tasks.jobTemplate());
                }));
    TaskFacts facts = facts(task, Optional.of(claim(task, DUE)));

    Plan plan =
        decider.decide(
            facts.withJobCreation(new JobCreation.Refused("t-1", "jobs.batch is forbidden")));

    assertThat(plan.status().getMessage())
        .isEqualTo("the API server refused Job t-1: jobs.batch is forbidden");
    assertThat(plan.claim()).contains(ClaimVerdict.Settle.as(ClaimOutcome.FAILED));
  }

  // --- The jobTemplate's dry run when a Job task is scheduled ------------------------------------

  @Test
  void aNewJobTaskAsksForADryRunOfItsJobFirstAndDoesNothingElse() {
    DelayedTask task =
        task(
            s -> {
              s.setRunAt(LATER.toString());
              s.setJobTemplate(Tasks.jobTemplate());
            });

    Plan plan = decider.decide(facts(task, Optional.empty()));

    assertThat(plan.jobToCheck())
        .hasValueSatisfying(
            job -> {
              assertThat(job).isEqualTo(JobFactory.jobFor(task, LATER, NOW));
            });
    assertThat(plan.schedule()).isEqualTo(ScheduleChange.KEEP);
    assertThat(plan.jobToCreate()).isEmpty();
    assertThat(plan.events()).isEmpty();
    assertThat(plan.claim()).isEmpty();
  }

  @Test
  void aJobTaskWhoseDryRunIsAcceptedOrUnansweredIsScheduled() {
    DelayedTask task =
        task(
            s -> {
              s.setRunAt(LATER.toString());
              s.setJobTemplate(Tasks.jobTemplate());
            });
    for (JobCheck check :
        List.of(
            new JobCheck.Accepted(),
            new JobCheck.Unanswered("the server is currently unable " + "to handle the request"))) {
      Plan plan = decider.decide(facts(task, Optional.empty()).withJobCheck(check));

      assertThat(plan.jobToCheck()).isEmpty();
      assertThat(plan.status().getPhase()).as(check.toString()).isEqualTo(Phase.Scheduled);
      assertThat(plan.schedule()).isEqualTo(new ScheduleChange.Write(LATER));
      assertThat(plan.events()).extracting(TaskEvent::reason).containsExactly(TaskEvents.SCHEDULED);
    }
  }

  @Test
  void
      aJobTaskWhoseDryRunIsRefusedIsInvalidWithTheApiServersMessageAndStaysSoUntilItsSpecChanges() {
    DelayedTask task =
        scheduled(
            task(
                s -> {
                  s.setRunAt(LATER.toString());
                  s.setJobTemplate(Tasks.jobTemplate());
                }));
    task.getMetadata().setGeneration(4L); // the template was edited
    String reason =
        "Job.batch \"t-1\" is invalid: spec.jobTemplate.spec.template.spec.restartPolicy: Required value";

    Plan refused =
        decider.decide(facts(task, Optional.empty()).withJobCheck(new JobCheck.Refused(reason)));

    assertThat(refused.status().getPhase()).isEqualTo(Phase.Invalid);
    assertThat(refused.status().getMessage())
        .isEqualTo(
            "spec.jobTemplate is refused by the API server (a dry run of "
                + "the Job's creation): "
                + reason
                + "; fix spec.jobTemplate and apply the task again");
    assertThat(refused.schedule()).as("its entry goes").isEqualTo(ScheduleChange.REMOVE);
    assertThat(refused.events())
        .containsExactly(TaskEvent.warning(TaskEvents.INVALID, refused.status().getMessage()));
    assertThat(condition(refused, Condition.READY)).isEqualTo("False");

    task.setStatus(refused.status());
    Plan again = decider.decide(facts(task, Optional.empty()));
    assertThat(again.jobToCheck()).as("one dry run per generation").isEmpty();
    assertThat(again.status()).as("no status write").isEqualTo(task.getStatus());
    assertThat(again.schedule()).isEqualTo(ScheduleChange.KEEP);
    assertThat(again.events()).isEmpty();
    assertThat(TaskState.waitingDue(task, new SpecValidator(SinkSpecRules.defaults())))
        .as("the resync adds no entry")
        .isEmpty();
    Plan claimed = decider.decide(facts(task, Optional.of(claim(task, LATER))));
    assertThat(claimed.jobToCreate()).isEmpty();
    assertThat(claimed.claim()).contains(ClaimVerdict.Settle.stale());

    task.getMetadata().setGeneration(5L); // fixed
    assertThat(decider.decide(facts(task, Optional.empty())).jobToCheck())
        .as("checked again")
        .isPresent();
  }

  @Test
  void aJobTaskScheduledForItsGenerationIsNotCheckedAgainAndOtherTasksNever() {
    DelayedTask job =
        scheduled(
            task(
                s -> {
                  s.setRunAt(LATER.toString());
                  s.setJobTemplate(Tasks.jobTemplate());
                }));
    assertThat(decider.decide(facts(job, Optional.empty())).jobToCheck()).isEmpty();
    assertThat(decider.decide(facts(job, Optional.of(claim(job, LATER)))).jobToCheck())
        .as("a claim fires")
        .isEmpty();

    DelayedTask statusOnly = task(s -> s.setRunAt(LATER.toString()));
    assertThat(decider.decide(facts(statusOnly, Optional.empty())).jobToCheck()).isEmpty();
    DelayedTask suspended =
        task(
            s -> {
              s.setRunAt(LATER.toString());
              s.setSuspend(true);
              s.setJobTemplate(Tasks.jobTemplate());
            });
    assertThat(decider.decide(facts(suspended, Optional.empty())).jobToCheck()).isEmpty();
  }

  @Test
  void aTransientFailureKeepsTheTaskScheduledAndBacksOff() {
    DelayedTask task =
        scheduled(
            task(
                s -> {
                  s.setRunAt(DUE.toString());
                  s.setJobTemplate(Tasks.jobTemplate());
                }));
    TaskFacts facts = facts(task, Optional.of(claim(task, DUE)));

    Plan plan = decider.decide(facts.withJobCreation(new JobCreation.Transient("t-1", "429")));

    assertThat(plan.status()).as("no status write").isEqualTo(task.getStatus());
    assertThat(plan.claim()).contains(new ClaimVerdict.Backoff("creating Job t-1 failed: 429"));
  }

  @Test
  void aClaimForADueTimeAlreadyHandledIsStaleAndFiresNothing() {
    DelayedTask task = fired(task(s -> s.setRunAt(DUE.toString())));

    Plan plan = decide(task, Optional.of(claim(task, NOW)));

    assertThat(plan.status()).isEqualTo(task.getStatus());
    assertThat(plan.claim()).contains(ClaimVerdict.Settle.stale());
    assertThat(plan.events()).isEmpty();
  }

  @Test
  void aFiringRecordedUnderAPhaseThatCouldNotBeReadIsNotFiredAgain() {
    // A store without the CRD's schema can hold a phase this version cannot read; the reader drops
    // it.
    DelayedTask task = fired(task(s -> s.setRunAt(DUE.toString())));
    task.getStatus().setPhase(null);

    Plan plan = decide(task, Optional.of(claim(task, NOW)));

    assertThat(plan.claim()).contains(ClaimVerdict.Settle.stale());
    assertThat(plan.status().getFiredTime()).isEqualTo(task.getStatus().getFiredTime());
    assertThat(plan.events()).isEmpty();
  }

  @Test
  void aClaimOfASuspendedOrInvalidTaskIsStale() {
    DelayedTask suspended = scheduled(task(s -> s.setRunAt(DUE.toString())));
    suspended.getSpec().setSuspend(true);
    assertThat(decide(suspended, Optional.of(claim(suspended, NOW))).claim())
        .contains(ClaimVerdict.Settle.stale());

    DelayedTask invalid = task(s -> s.setDelay("soon"));
    invalid.getMetadata().setUid("uid-2");
    assertThat(decide(invalid, Optional.of(claim(invalid, NOW))).claim())
        .contains(ClaimVerdict.Settle.stale());
  }

  // --- The Job's outcome
  // --------------------------------------------------------------------------

  @Test
  void aCompleteJobMakesTheTaskSucceeded() {
    DelayedTask task = running();
    jobs.put("job-1", job("job-1", task, "Complete", null));

    Plan plan = decide(task, Optional.empty());

    assertThat(plan.status().getPhase()).isEqualTo(Phase.Succeeded);
    assertThat(condition(plan, Condition.COMPLETE)).isEqualTo("True");
    assertThat(plan.events())
        .containsExactly(TaskEvent.normal(TaskEvents.SUCCEEDED, "Job job-1 completed"));
  }

  @Test
  void aFailedJobMakesTheTaskFailedWithTheJobsReason() {
    DelayedTask task = running();
    jobs.put("job-1", job("job-1", task, "Failed", "BackoffLimitExceeded"));

    Plan plan = decide(task, Optional.empty());

    assertThat(plan.status().getPhase()).isEqualTo(Phase.Failed);
    assertThat(plan.status().getMessage()).isEqualTo("Job job-1 failed: BackoffLimitExceeded");
    assertThat(plan.events()).extracting(TaskEvent::reason).containsExactly(TaskEvents.FAILED);
  }

  @Test
  void aJobThatIsGoneFailsTheTaskSoItNeverStaysRunning() {
    Plan plan = decide(running(), Optional.empty());

    assertThat(plan.status().getPhase()).isEqualTo(Phase.Failed);
    assertThat(plan.status().getMessage())
        .contains("Job job-1 was deleted before its outcome was recorded");
    assertThat(Conditions.find(plan.status(), Condition.FAILED))
        .map(Condition::getReason)
        .contains("JobGone");
  }

  @Test
  void aJobStillRunningChangesNothing() {
    DelayedTask task = running();
    jobs.put("job-1", job("job-1", task, null, null));

    Plan plan = decide(task, Optional.empty());

    assertThat(plan.status()).isEqualTo(task.getStatus());
    assertThat(plan.events()).isEmpty();
  }

  // --- Finished tasks and their TTL -------------------------------------------------------------

  @Test
  void aFinishedTaskWaitsOutItsTtlThenIsDeleted() {
    TaskDecider withTtl =
        new TaskDecider(
            new SpecValidator(SinkSpecRules.defaults()),
            SecondsSetting.finishedTtl(Optional.of(60L)));
    DelayedTask task = fired(task(s -> s.setRunAt(DUE.toString())));

    Plan waiting = withTtl.decide(facts(task, Optional.empty()));
    assertThat(waiting.requeue()).contains(Duration.ofSeconds(60));
    assertThat(waiting.deleteTask()).isFalse();

    Plan expired =
        withTtl.decide(new TaskFacts(task, Map.of(), Optional.empty(), NOW.plusSeconds(61)));
    assertThat(expired.deleteTask()).isTrue();
  }

  /**
   * The operator-wide default is not bounded by the CRD: a TTL beyond Instant's range must not
   * throw.
   */
  @Test
  void aTtlBeyondInstantsRangeWaitsAtMostTenYearsAtATimeAndNeverThrows() {
    TaskDecider withTtl =
        new TaskDecider(
            new SpecValidator(SinkSpecRules.defaults()),
            SecondsSetting.finishedTtl(Optional.of(Long.MAX_VALUE)));
    DelayedTask task = fired(task(s -> s.setRunAt(DUE.toString())));

    Plan waiting = withTtl.decide(facts(task, Optional.empty()));

    assertThat(waiting.requeue()).contains(Duration.ofSeconds(315_360_000L));
    assertThat(waiting.deleteTask()).isFalse();
  }

  @Test
  void theFiringThatFinishesATaskStartsItsTtl() {
    DelayedTask task =
        scheduled(
            task(
                s -> {
                  s.setRunAt(DUE.toString());
                  s.setTtlSecondsAfterFinished(0L);
                }));

    Plan plan = decide(task, Optional.of(claim(task, DUE)));

    assertThat(plan.status().getPhase()).isEqualTo(Phase.Fired);
    assertThat(plan.deleteTask())
        .as("ttlSecondsAfterFinished=0: deleted as soon as it fired")
        .isTrue();
  }

  @Test
  void aFinishedTaskAGitOpsToolManagesIsKeptAndSaysWhyOnce() {
    TaskDecider withTtl =
        new TaskDecider(
            new SpecValidator(SinkSpecRules.defaults()),
            SecondsSetting.finishedTtl(Optional.of(0L)));
    DelayedTask task = fired(task(s -> s.setRunAt(DUE.toString())));
    task.getMetadata()
        .setAnnotations(
            Map.of("argocd.argoproj.io/tracking-id", "shop:delayedtask.io/DelayedTask:ns/t"));

    Plan kept = withTtl.decide(facts(task, Optional.empty()));
    assertThat(kept.deleteTask()).isFalse();
    assertThat(Conditions.find(kept.status(), Condition.READY))
        .map(Condition::getMessage)
        .get()
        .asString()
        .contains("kept: managed by Argo CD");
    assertThat(kept.events()).extracting(TaskEvent::reason).containsExactly(TaskEvents.TTL_SKIPPED);

    task.setStatus(kept.status());
    Plan again = withTtl.decide(facts(task, Optional.empty()));
    assertThat(again.events()).isEmpty();
    assertThat(again.status()).isEqualTo(task.getStatus());
  }

  // --- helpers
  // ------------------------------------------------------------------------------------

  // --- The recorded due time stands (issue 16, item 1) -------------------------------------------

  @Test
  void aFinishedTaskWhoseDueTimeWouldNowBeComputedDifferentlyDoesNotFireAgain() {
    DelayedTask task = fired(task(s -> s.setRunAt(DUE.toString())));
    // Another operator version derives another instant from the same spec (a new time-zone
    // database): simulated by a status that recorded another due time for this generation.
    task.getStatus().setDueTime(Times.format(DUE.minusSeconds(3600)));

    Plan plan = decide(task, Optional.of(claim(task, NOW)));

    assertThat(plan.status().getPhase()).isEqualTo(Phase.Fired);
    assertThat(plan.status().getDueTime()).isEqualTo(Times.format(DUE.minusSeconds(3600)));
    assertThat(plan.schedule()).isEqualTo(ScheduleChange.KEEP);
    assertThat(plan.claim()).contains(ClaimVerdict.Settle.stale());
  }

  // --- Sink delivery
  // ------------------------------------------------------------------------------

  @Test
  void aDueSinkTaskSendsItsFirstAttemptAndParksItsEntryAtTheSafetyNet() {
    DelayedTask task = scheduled(sinkTask(null));

    Plan plan = decide(task, Optional.of(claim(task, NOW)));

    assertThat(plan.delivery())
        .contains(
            new DeliveryAttempt(
                DeliveryOutcome.Target.SINK, 1, 1, Duration.ofSeconds(10), Map.of()));
    assertThat(plan.status()).as("no status write before the answer").isEqualTo(task.getStatus());
    assertThat(plan.claim())
        .contains(
            new ClaimVerdict.HandBack(
                NOW.plusSeconds(10).plus(DeliveryDecisions.SAFETY_MARGIN), Optional.empty()));
  }

  @Test
  void aDeliveredAttemptSucceedsWithOneStatusWriteAndRemovesTheEntry() {
    DelayedTask task = scheduled(sinkTask(null));

    Plan plan = decideOutcome(task, outcome(1, DeliveryOutcome.Target.SINK, answered(200)));

    assertThat(plan.status().getPhase()).isEqualTo(Phase.Succeeded);
    assertThat(plan.status().getFiredTime()).isEqualTo(Times.format(NOW));
    assertThat(plan.status().getDelivery().getAttempts()).isEqualTo(1);
    assertThat(plan.status().getDelivery().getResponseCode()).isEqualTo(200);
    assertThat(plan.status().getDelivery().getNextAttemptTime()).isNull();
    assertThat(plan.status().getSinkUri())
        .as("Knative's status.sinkUri, in the same write")
        .isEqualTo(URL);
    assertThat(condition(plan, Condition.COMPLETE)).isEqualTo("True");
    assertThat(plan.schedule()).isEqualTo(ScheduleChange.REMOVE);
    assertThat(plan.events()).extracting(TaskEvent::reason).containsExactly(TaskEvents.DELIVERED);
    assertThat(plan.deliveryMetric()).contains(DeliveryCount.DELIVERED);
  }

  @Test
  void a503WaitsForTheBackoffOnRedisClockThenTheNextClaimSendsAttemptTwo() {
    DelayedTask task = scheduled(sinkTask(null));
    Instant redisEnd =
        NOW.plusSeconds(500); // Redis's clock far from this host's: scores follow Redis

    Plan retry =
        decideOutcome(
            task,
            new DeliveryOutcome(
                "uid-1", DUE, DeliveryOutcome.Target.SINK, 1, URL, redisEnd, answered(503)));

    assertThat(retry.status().getPhase()).isEqualTo(Phase.Running);
    assertThat(retry.status().getDelivery().getNextAttemptTime())
        .as("for people: the attempt's end on this clock (sent at NOW, took 3 ms) plus 1 s")
        .isEqualTo(Times.format(NOW.plusMillis(1003)));
    assertThat(retry.schedule())
        .as("the wait, on Redis's clock")
        .isEqualTo(new ScheduleChange.Write(redisEnd.plusSeconds(1)));
    assertThat(retry.events())
        .extracting(TaskEvent::reason)
        .containsExactly(TaskEvents.DELIVERY_FAILED);
    assertThat(condition(retry, Condition.RECONCILING)).isEqualTo("True");

    task.setStatus(retry.status());
    Plan waiting = decider.decide(new TaskFacts(task, jobs, Optional.empty(), NOW));
    assertThat(waiting.status())
        .as("no claim: nothing changes while the retry waits")
        .isEqualTo(task.getStatus());
    assertThat(waiting.schedule()).isEqualTo(ScheduleChange.KEEP);

    Plan second =
        decider.decide(
            new TaskFacts(
                task, jobs, Optional.of(claim(task, redisEnd.plusSeconds(1))), NOW.plusSeconds(1)));
    assertThat(second.delivery()).map(DeliveryAttempt::targetAttempt).contains(2);
    assertThat(second.delivery()).map(DeliveryAttempt::attempt).contains(2);
  }

  @Test
  void eachAttemptRecordsTheUrlItWentToAndAnUnresolvedOneKeepsTheLast() {
    DelayedTask task = scheduled(sinkTask(null));
    Plan first = decideOutcome(task, outcome(1, DeliveryOutcome.Target.SINK, answered(503)));
    assertThat(first.status().getSinkUri()).isEqualTo(URL);

    task.setStatus(first.status());
    Plan second =
        decideOutcome(
            task,
            new DeliveryOutcome(
                "uid-1",
                DUE,
                DeliveryOutcome.Target.SINK,
                2,
                "Broker default",
                NOW,
                new DeliveryOutcome.Result.NotSent(
                    NOW, "Broker default has no address yet", true)));
    assertThat(second.status().getDelivery().getAttempts()).isEqualTo(2);
    assertThat(second.status().getSinkUri())
        .as("not sent anywhere: the last URL stays")
        .isEqualTo(URL);

    task.setStatus(second.status());
    Plan third =
        decideOutcome(
            task,
            new DeliveryOutcome(
                "uid-1",
                DUE,
                DeliveryOutcome.Target.SINK,
                3,
                "http://broker-ingress.knative-eventing.svc.cluster.local/shop/default",
                NOW,
                answered(202)));
    assertThat(third.status().getSinkUri())
        .isEqualTo("http://broker-ingress.knative-eventing.svc.cluster.local/shop/default");
  }

  @Test
  void aRequestStillInFlightIsNotSentTwice() {
    DelayedTask task = scheduled(sinkTask(null));

    Plan plan =
        decider.decide(
            new TaskFacts(task, jobs, Optional.of(claim(task, NOW)), NOW, Optional.empty(), true));

    assertThat(plan.delivery()).isEmpty();
    assertThat(plan.claim())
        .contains(new ClaimVerdict.HandBack(NOW.plusSeconds(10), Optional.empty()));
  }

  @Test
  void a400FailsAtOnceWithTheMessageTheContractGives() {
    DelayedTask task = scheduled(sinkTask(null));

    Plan plan = decideOutcome(task, outcome(1, DeliveryOutcome.Target.SINK, answered(400)));

    assertThat(plan.status().getPhase()).isEqualTo(Phase.Failed);
    assertThat(plan.status().getMessage())
        .isEqualTo("POST " + URL + " answered 400 on attempt 1 of 4");
    assertThat(plan.schedule()).isEqualTo(ScheduleChange.REMOVE);
    assertThat(condition(plan, Condition.STALLED)).isEqualTo("True");
  }

  @Test
  void theLastRetryFailingHandsTheEventToTheDeadLetterSinkWithTheErrorCode() {
    DelayedTask task =
        scheduled(
            sinkTask(
                d -> {
                  d.setRetry(1);
                  io.delayedtask.operator.api.v1alpha1.Destination dls =
                      new io.delayedtask.operator.api.v1alpha1.Destination();
                  dls.setRef(
                      new io.delayedtask.operator.api.v1alpha1.ServiceReference(
                          "v1", "Service", "dead-letters"));
                  d.setDeadLetterSink(dls);
                }));
    task.setStatus(
        decideOutcome(task, outcome(1, DeliveryOutcome.Target.SINK, answered(503))).status());

    Plan failed = decideOutcome(task, outcome(2, DeliveryOutcome.Target.SINK, answered(502)));
    assertThat(failed.status().getPhase()).isEqualTo(Phase.Failed);
    assertThat(failed.status().getMessage())
        .isEqualTo("POST " + URL + " answered 502 on attempt 2 of 2");
    assertThat(failed.status().getDelivery().getNextAttemptTime())
        .as("the dead-letter sink's turn")
        .isNotNull();
    assertThat(failed.requeue()).as("no TTL while the dead-letter sink waits").isEmpty();
    task.setStatus(failed.status());

    Plan toDeadLetter =
        decider.decide(new TaskFacts(task, jobs, Optional.of(claim(task, NOW)), NOW));
    assertThat(toDeadLetter.delivery())
        .contains(
            new DeliveryAttempt(
                DeliveryOutcome.Target.DEAD_LETTER_SINK,
                3,
                1,
                Duration.ofSeconds(10),
                Map.of("delayedtaskerrorcode", "502")));

    Plan taken =
        decideOutcome(task, outcome(3, DeliveryOutcome.Target.DEAD_LETTER_SINK, answered(202)));
    assertThat(taken.status().getPhase()).isEqualTo(Phase.Failed);
    assertThat(taken.status().getDelivery().getDeadLettered()).isTrue();
    assertThat(taken.status().getDelivery().getResponseCode())
        .as("the sink's last answer")
        .isEqualTo(502);
    assertThat(taken.events())
        .extracting(TaskEvent::reason)
        .containsExactly(TaskEvents.DEAD_LETTERED);
    assertThat(taken.schedule()).isEqualTo(ScheduleChange.REMOVE);
  }

  @Test
  void aPermanentErrorOnTheFirstAttemptGivesTheDeadLetterSinkItsOwnAttemptsOneToFour() {
    DelayedTask task =
        scheduled(
            sinkTask(
                d -> {
                  io.delayedtask.operator.api.v1alpha1.Destination dls =
                      new io.delayedtask.operator.api.v1alpha1.Destination();
                  dls.setRef(
                      new io.delayedtask.operator.api.v1alpha1.ServiceReference(
                          "v1", "Service", "dead-letters"));
                  d.setDeadLetterSink(dls);
                })); // retry 3: four attempts per target

    Plan failed = decideOutcome(task, outcome(1, DeliveryOutcome.Target.SINK, answered(400)));
    assertThat(failed.status().getPhase()).isEqualTo(Phase.Failed);
    assertThat(failed.status().getMessage())
        .isEqualTo("POST " + URL + " answered 400 on attempt 1 of 4");
    assertThat(failed.status().getDelivery().getSinkAttempts()).isEqualTo(1);
    task.setStatus(failed.status());

    List<Integer> headers = new ArrayList<>();
    List<String> messages = new ArrayList<>();
    for (int attempt = 2; ; attempt++) {
      Plan send = decider.decide(new TaskFacts(task, jobs, Optional.of(claim(task, NOW)), NOW));
      if (send.delivery().isEmpty()) {
        assertThat(attempt).as("the dead-letter sink's attempts").isEqualTo(6);
        assertThat(send.claim()).contains(ClaimVerdict.Settle.stale());
        break;
      }
      assertThat(attempt).as("no fifth attempt to the dead-letter sink").isLessThanOrEqualTo(5);
      DeliveryAttempt sent = send.delivery().get();
      assertThat(sent.target()).isEqualTo(DeliveryOutcome.Target.DEAD_LETTER_SINK);
      assertThat(sent.attempt())
          .as("requests for this due time, across targets")
          .isEqualTo(attempt);
      assertThat(sent.extensions()).containsEntry("delayedtaskerrorcode", "400");
      headers.add(sent.targetAttempt());

      Plan answer =
          decideOutcome(
              task, outcome(attempt, DeliveryOutcome.Target.DEAD_LETTER_SINK, answered(503)));
      assertThat(answer.status().getPhase()).isEqualTo(Phase.Failed);
      assertThat(answer.status().getDelivery().getAttempts()).isEqualTo(attempt);
      assertThat(answer.status().getDelivery().getResponseCode())
          .as("the sink's answer")
          .isEqualTo(400);
      answer.events().stream().map(TaskEvent::message).forEach(messages::add);
      task.setStatus(answer.status());
      if (answer.schedule() == ScheduleChange.REMOVE) {
        assertThat(attempt).as("removed after the dead-letter sink's fourth attempt").isEqualTo(5);
      }
    }
    assertThat(headers)
        .as("ce-delayedtaskattempt to the dead-letter sink")
        .containsExactly(1, 2, 3, 4);
    String dls = "the dead-letter sink: POST " + URL + " answered 503 on attempt ";
    assertThat(messages).hasSize(4);
    assertThat(messages.get(0)).startsWith(dls + "1 of 4; retrying in ");
    assertThat(messages.get(2)).startsWith(dls + "3 of 4; retrying in ");
    assertThat(messages.get(3)).isEqualTo(dls + "4 of 4");
    assertThat(task.getStatus().getMessage())
        .as("the task keeps the sink's failure")
        .isEqualTo("POST " + URL + " answered 400 on attempt 1 of 4");
  }

  @Test
  void aTaskSuspendedAfterItsSinkFailedEarlyResumesWithTheDeadLetterSinkNotTheSink() {
    DelayedTask task =
        scheduled(
            sinkTask(
                d -> {
                  io.delayedtask.operator.api.v1alpha1.Destination dls =
                      new io.delayedtask.operator.api.v1alpha1.Destination();
                  dls.setRef(
                      new io.delayedtask.operator.api.v1alpha1.ServiceReference(
                          "v1", "Service", "dead-letters"));
                  d.setDeadLetterSink(dls);
                }));
    task.setStatus(
        decideOutcome(task, outcome(1, DeliveryOutcome.Target.SINK, answered(400))).status());
    task.getSpec().setSuspend(true);
    task.setStatus(decider.decide(new TaskFacts(task, jobs, Optional.empty(), NOW)).status());
    assertThat(task.getStatus().getPhase()).isEqualTo(Phase.Suspended);

    task.getSpec().setSuspend(false);
    Plan resumed = decider.decide(new TaskFacts(task, jobs, Optional.empty(), NOW));
    assertThat(resumed.status().getPhase()).isEqualTo(Phase.Failed);
    task.setStatus(resumed.status());
    Plan send = decider.decide(new TaskFacts(task, jobs, Optional.of(claim(task, NOW)), NOW));
    assertThat(send.delivery())
        .contains(
            new DeliveryAttempt(
                DeliveryOutcome.Target.DEAD_LETTER_SINK,
                2,
                1,
                Duration.ofSeconds(10),
                Map.of("delayedtaskerrorcode", "400")));
  }

  @Test
  void anOutcomeAlreadyRecordedIsNotCountedTwice() {
    DelayedTask task = scheduled(sinkTask(null));
    task.setStatus(
        decideOutcome(task, outcome(1, DeliveryOutcome.Target.SINK, answered(503))).status());

    Plan again = decideOutcome(task, outcome(1, DeliveryOutcome.Target.SINK, answered(503)));

    assertThat(again.status()).isEqualTo(task.getStatus());
    assertThat(again.events()).isEmpty();
  }

  @Test
  void aSinkTaskPastItsStartingDeadlineIsMissedAndSendsNothing() {
    DelayedTask task = scheduled(sinkTask(null));
    task.getSpec().setStartingDeadlineSeconds(5L);

    Plan plan = decide(task, Optional.of(claim(task, DUE.plusSeconds(60))));

    assertThat(plan.status().getPhase()).isEqualTo(Phase.Missed);
    assertThat(plan.delivery()).isEmpty();
  }

  // --- Fail closed without the admission policy
  // ---------------------------------------------------

  private static final Optional<String> POLICY_MISSING =
      Optional.of(
          "the ValidatingAdmissionPolicyBinding delayed-task-operator-author-rights is missing, so ...");

  @Test
  void
      aSpecWrittenWhileThePolicyWasMissingCreatesNoJobAndSendsNoTokenOnceItIsBackAndSaysToWriteItAgain() {
    DelayedTask task =
        scheduled(
            task(
                s -> {
                  s.setRunAt(DUE.toString());
                  s.setJobTemplate(Tasks.jobTemplate());
                }));
    AdmissionPolicies.Verdict refused =
        new AdmissionPolicies.Verdict.NotAdmitted(
            "its spec (generation 1) was "
                + "written while the admission policy was missing ... Write the task again");

    Plan plan = decider.decide(facts(task, Optional.of(claim(task, DUE))).withAdmission(refused));

    assertThat(plan.jobToCreate()).as("no Job for a spec the policy never saw").isEmpty();
    assertThat(plan.status().getPhase()).isEqualTo(Phase.Scheduled);
    Condition ready = Conditions.find(plan.status(), Condition.READY).orElseThrow();
    assertThat(ready.getStatus()).isEqualTo("False");
    assertThat(ready.getReason()).isEqualTo("NotAdmitted");
    assertThat(ready.getMessage()).contains("spec.jobTemplate", "Write the task again");
    assertThat(plan.events())
        .extracting(TaskEvent::warning, TaskEvent::reason)
        .containsExactly(tuple(true, TaskEvents.NOT_ADMITTED));
    assertThat(plan.status().getAdmission()).as("no record for it").isNull();

    DelayedTask sink =
        scheduled(
            task(
                s -> {
                  s.setRunAt(DUE.toString());
                  io.delayedtask.operator.api.v1alpha1.Destination destination =
                      new io.delayedtask.operator.api.v1alpha1.Destination();
                  destination.setUri("https://hooks.example.com/x");
                  destination.setAudience("orders");
                  s.setSink(destination);
                }));
    Plan sent = decider.decide(facts(sink, Optional.of(claim(sink, DUE))).withAdmission(refused));
    assertThat(sent.delivery()).as("no token sent").isEmpty();
    assertThat(Conditions.find(sent.status(), Condition.READY).orElseThrow().getReason())
        .isEqualTo("NotAdmitted");

    Plan admitted =
        decider.decide(
            facts(task, Optional.of(claim(task, DUE)))
                .withAdmission(new AdmissionPolicies.Verdict.Admitted(Optional.of("1.record"))));
    assertThat(admitted.jobToCreate()).as("written again, admitted: the Job").isPresent();
    assertThat(admitted.status().getAdmission()).as("and the record written").isEqualTo("1.record");
  }

  @Test
  void withoutTheAdmissionPolicyADueJobTaskCreatesNoJobAndWaitsNotReadyWithOneWarning() {
    DelayedTask task =
        scheduled(
            task(
                s -> {
                  s.setRunAt(DUE.toString());
                  s.setJobTemplate(Tasks.jobTemplate());
                }));

    Plan plan =
        decider.decide(
            facts(task, Optional.of(claim(task, DUE))).withAdmissionPolicyMissing(POLICY_MISSING));

    assertThat(plan.jobToCreate()).as("no Job while the policy is missing").isEmpty();
    assertThat(plan.status().getPhase()).isEqualTo(Phase.Scheduled);
    Condition ready = Conditions.find(plan.status(), Condition.READY).orElseThrow();
    assertThat(ready.getStatus()).isEqualTo("False");
    assertThat(ready.getReason()).isEqualTo("AdmissionPolicyMissing");
    assertThat(ready.getMessage())
        .contains("spec.jobTemplate", "delayed-task-operator-author-rights");
    assertThat(condition(plan, Condition.STALLED)).isEqualTo("False");
    assertThat(plan.events())
        .extracting(TaskEvent::warning, TaskEvent::reason)
        .containsExactly(tuple(true, TaskEvents.ADMISSION_POLICY_MISSING));
    assertThat(plan.claim())
        .contains(
            new ClaimVerdict.HandBack(
                DUE.plus(TaskDecider.ADMISSION_POLICY_RECHECK),
                Optional.of(ClaimOutcome.ADMISSION_POLICY_MISSING)));
    assertThat(TaskDecider.ADMISSION_POLICY_RECHECK)
        .as("fires within 30 s of the policy's return")
        .isLessThanOrEqualTo(Duration.ofSeconds(20));

    task.setStatus(plan.status());
    Plan again =
        decider.decide(
            new TaskFacts(
                    task, jobs, Optional.of(claim(task, DUE.plusSeconds(10))), NOW.plusSeconds(10))
                .withAdmissionPolicyMissing(POLICY_MISSING));
    assertThat(again.events()).as("the Warning once, not per recheck").isEmpty();
    assertThat(again.jobToCreate()).isEmpty();

    task.setStatus(again.status());
    Plan back =
        decider.decide(
            new TaskFacts(
                task, jobs, Optional.of(claim(task, DUE.plusSeconds(20))), NOW.plusSeconds(20)));
    assertThat(back.jobToCreate()).as("the policy is back: the Job").isPresent();
  }

  @Test
  void withoutTheAdmissionPolicyTheStartingDeadlineStillCounts() {
    DelayedTask task =
        scheduled(
            task(
                s -> {
                  s.setRunAt(DUE.toString());
                  s.setJobTemplate(Tasks.jobTemplate());
                  s.setStartingDeadlineSeconds(5L);
                }));

    Plan plan =
        decider.decide(
            facts(task, Optional.of(claim(task, DUE.plusSeconds(60))))
                .withAdmissionPolicyMissing(POLICY_MISSING));

    assertThat(plan.status().getPhase()).isEqualTo(Phase.Missed);
    assertThat(plan.jobToCreate()).isEmpty();
  }

  @Test
  void withoutTheAdmissionPolicyAStatusOnlyTaskAndASinkWithoutAudienceFireAsUsual() {
    DelayedTask statusOnly = scheduled(task(s -> s.setRunAt(DUE.toString())));
    Plan fired =
        decider.decide(
            facts(statusOnly, Optional.of(claim(statusOnly, NOW)))
                .withAdmissionPolicyMissing(POLICY_MISSING));
    assertThat(fired.status().getPhase()).isEqualTo(Phase.Fired);
    assertThat(condition(fired, Condition.READY)).isEqualTo("True");

    DelayedTask sink = scheduled(sinkTask(null));
    Plan sent =
        decider.decide(
            facts(sink, Optional.of(claim(sink, NOW))).withAdmissionPolicyMissing(POLICY_MISSING));
    assertThat(sent.delivery()).map(DeliveryAttempt::attempt).contains(1);
  }

  @Test
  void withoutTheAdmissionPolicyASinkWithAnAudienceSendsNothingAndWaits() {
    DelayedTask task = scheduled(sinkTask(null));
    task.getSpec().getSink().setAudience("orders");

    Plan plan =
        decider.decide(
            facts(task, Optional.of(claim(task, NOW))).withAdmissionPolicyMissing(POLICY_MISSING));

    assertThat(plan.delivery()).as("no request, so no token").isEmpty();
    assertThat(plan.status().getPhase()).isEqualTo(Phase.Scheduled);
    Condition ready = Conditions.find(plan.status(), Condition.READY).orElseThrow();
    assertThat(ready.getStatus()).isEqualTo("False");
    assertThat(ready.getReason()).isEqualTo("AdmissionPolicyMissing");
    assertThat(ready.getMessage()).contains("spec.sink.audience");
    assertThat(plan.events())
        .extracting(TaskEvent::reason)
        .containsExactly(TaskEvents.ADMISSION_POLICY_MISSING);
    assertThat(plan.claim())
        .contains(
            new ClaimVerdict.HandBack(
                NOW.plus(TaskDecider.ADMISSION_POLICY_RECHECK),
                Optional.of(ClaimOutcome.ADMISSION_POLICY_MISSING)));

    Plan present = decider.decide(facts(task, Optional.of(claim(task, NOW))));
    assertThat(present.delivery()).map(DeliveryAttempt::attempt).contains(1);
  }

  @Test
  void withoutTheAdmissionPolicyASignedSinkSendsNothingAndWaits() {
    DelayedTask task = scheduled(sinkTask(null));
    task.getSpec().getSink().setSigning(new io.delayedtask.operator.api.v1alpha1.Signing("orders"));

    Plan plan =
        decider.decide(
            facts(task, Optional.of(claim(task, NOW))).withAdmissionPolicyMissing(POLICY_MISSING));

    assertThat(plan.delivery()).as("nothing signed, nothing sent").isEmpty();
    assertThat(plan.status().getPhase()).isEqualTo(Phase.Scheduled);
    Condition ready = Conditions.find(plan.status(), Condition.READY).orElseThrow();
    assertThat(ready.getReason()).isEqualTo("AdmissionPolicyMissing");
    assertThat(ready.getMessage()).contains("spec.sink.signing");
    assertThat(plan.claim())
        .contains(
            new ClaimVerdict.HandBack(
                NOW.plus(TaskDecider.ADMISSION_POLICY_RECHECK),
                Optional.of(ClaimOutcome.ADMISSION_POLICY_MISSING)));

    Plan present = decider.decide(facts(task, Optional.of(claim(task, NOW))));
    assertThat(present.delivery()).map(DeliveryAttempt::attempt).contains(1);
  }

  @Test
  void withoutTheAdmissionPolicyASignedDeadLetterSinkWaitsWhileAnUnsignedSinkIsSent() {
    DelayedTask task =
        scheduled(
            sinkTask(
                d -> {
                  d.setRetry(0);
                  io.delayedtask.operator.api.v1alpha1.Destination dls =
                      new io.delayedtask.operator.api.v1alpha1.Destination();
                  dls.setRef(
                      new io.delayedtask.operator.api.v1alpha1.ServiceReference(
                          "v1", "Service", "dead-letters"));
                  dls.setSigning(new io.delayedtask.operator.api.v1alpha1.Signing("dead"));
                  d.setDeadLetterSink(dls);
                }));
    Plan first =
        decider.decide(
            facts(task, Optional.of(claim(task, NOW))).withAdmissionPolicyMissing(POLICY_MISSING));
    assertThat(first.delivery())
        .as("the sink itself is not signed")
        .map(DeliveryAttempt::attempt)
        .contains(1);
    task.setStatus(
        decideOutcome(task, outcome(1, DeliveryOutcome.Target.SINK, answered(502))).status());
    assertThat(task.getStatus().getPhase()).isEqualTo(Phase.Failed);

    Plan held =
        decider.decide(
            facts(task, Optional.of(claim(task, NOW))).withAdmissionPolicyMissing(POLICY_MISSING));
    assertThat(held.delivery()).isEmpty();
    assertThat(Conditions.find(held.status(), Condition.READY).orElseThrow().getMessage())
        .contains("spec.delivery.deadLetterSink.signing");

    Plan present = decider.decide(facts(task, Optional.of(claim(task, NOW))));
    assertThat(present.delivery())
        .map(DeliveryAttempt::target)
        .contains(DeliveryOutcome.Target.DEAD_LETTER_SINK);
  }

  private static final String URL = "http://orders.ns.svc.cluster.local/orders/cancel";

  private static DelayedTask sinkTask(
      Consumer<io.delayedtask.operator.api.v1alpha1.DeliverySpec> delivery) {
    return task(
        s -> {
          s.setRunAt(DUE.toString());
          io.delayedtask.operator.api.v1alpha1.Destination sink =
              new io.delayedtask.operator.api.v1alpha1.Destination();
          sink.setRef(
              new io.delayedtask.operator.api.v1alpha1.ServiceReference("v1", "Service", "orders"));
          sink.setUri("/orders/cancel");
          s.setSink(sink);
          if (delivery != null) {
            io.delayedtask.operator.api.v1alpha1.DeliverySpec spec =
                new io.delayedtask.operator.api.v1alpha1.DeliverySpec();
            delivery.accept(spec);
            s.setDelivery(spec);
          }
        });
  }

  private Plan decideOutcome(DelayedTask task, DeliveryOutcome outcome) {
    return decider.decide(
        new TaskFacts(task, jobs, Optional.empty(), NOW, Optional.of(outcome), false));
  }

  private static DeliveryOutcome outcome(
      int attempt, DeliveryOutcome.Target target, DeliveryOutcome.Result result) {
    return new DeliveryOutcome("uid-1", DUE, target, attempt, URL, NOW, result);
  }

  private static DeliveryOutcome.Result answered(int status) {
    return new DeliveryOutcome.Result.Sent(
        new io.delayedtask.operator.sink.DeliveryResult.Answered(
            NOW, Duration.ofMillis(3), status, Optional.empty()));
  }

  /** As the reconciler decides: a Job task's dry run, when the plan asks for one, is accepted. */
  private Plan decide(DelayedTask task, Optional<ClaimedEntry> claim) {
    TaskFacts facts = facts(task, claim);
    Plan plan = decider.decide(facts);
    return plan.jobToCheck().isPresent()
        ? decider.decide(facts.withJobCheck(new JobCheck.Accepted()))
        : plan;
  }

  private TaskFacts facts(DelayedTask task, Optional<ClaimedEntry> claim) {
    return new TaskFacts(task, jobs, claim, NOW);
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

  /** As it stands after its first reconcile. */
  private DelayedTask scheduled(DelayedTask task) {
    task.setStatus(decide(task, Optional.empty()).status());
    return task;
  }

  /** As it stands after it fired (status only). */
  private DelayedTask fired(DelayedTask task) {
    scheduled(task);
    task.setStatus(decide(task, Optional.of(claim(task, NOW))).status());
    return task;
  }

  /**
   * Issue 16, item 3: a Job with ttlSecondsAfterFinished 0 is deleted right after it completes; a
   * reconcile that runs after its delete notification finds neither it in the cache nor on the API
   * server, and takes the outcome from the notification ({@link TaskJobs}), not "Job gone".
   */
  @Test
  void aJobDeletedRightAfterItCompletedGivesItsOutcomeFromItsDeleteNotification() {
    DelayedTask task = running();
    TaskJobs jobs = new TaskJobs();
    jobs.deleted(job("job-1", task, "Complete", null));

    Map<String, Job> seen = jobs.of(task, List.of(), name -> null);
    Plan plan = decider.decide(new TaskFacts(task, seen, Optional.empty(), NOW));

    assertThat(plan.status().getPhase()).isEqualTo(Phase.Succeeded);
    assertThat(plan.events()).extracting(TaskEvent::reason).containsExactly(TaskEvents.SUCCEEDED);
  }

  /**
   * The status write that recorded Running was lost, and the Job finished and was deleted (TTL 0)
   * before the firing was retried: the retry finds it in the delete notifications, so it records
   * the outcome and never creates the Job a second time for the same due time.
   */
  @Test
  void aRetriedFiringWhoseJobAlreadyFinishedAndWasDeletedRecordsItsOutcomeAndCreatesNoSecondJob() {
    DelayedTask task =
        scheduled(
            task(
                s -> {
                  s.setRunAt(DUE.toString());
                  s.setJobTemplate(Tasks.jobTemplate());
                }));
    TaskJobs jobs = new TaskJobs();
    jobs.deleted(job(JobNames.jobName("t", "uid-1", DUE), task, "Complete", null));

    Map<String, Job> seen = jobs.of(task, List.of(), name -> null);
    Plan plan = decider.decide(new TaskFacts(task, seen, Optional.of(claim(task, DUE)), NOW));

    assertThat(plan.jobToCreate()).as("no second Job for the same due time").isEmpty();
    assertThat(plan.status().getPhase()).isEqualTo(Phase.Succeeded);
    assertThat(plan.status().getJobName()).isEqualTo(JobNames.jobName("t", "uid-1", DUE));
    assertThat(plan.events())
        .extracting(TaskEvent::reason)
        .contains(TaskEvents.JOB_CREATED, TaskEvents.SUCCEEDED);
  }

  @Test
  void aJobDeletedBeforeItFinishedLeavesTheTaskFailedWithTheJobGone() {
    DelayedTask task = running();
    TaskJobs jobs = new TaskJobs();
    jobs.deleted(job("job-1", task, null, null));

    Map<String, Job> seen = jobs.of(task, List.of(), name -> null);
    Plan plan = decider.decide(new TaskFacts(task, seen, Optional.empty(), NOW));

    assertThat(seen).isEmpty();
    assertThat(plan.status().getPhase()).isEqualTo(Phase.Failed);
    assertThat(plan.status().getMessage())
        .startsWith("Job job-1 was deleted before its outcome was recorded");
  }

  @Test
  void aRunningTasksJobMissingFromTheCacheIsReadLiveAndOnlyThen() {
    DelayedTask task = running();
    Job complete = job("job-1", task, "Complete", null);
    TaskJobs jobs = new TaskJobs();
    List<String> reads = new ArrayList<>();

    assertThat(
            jobs.of(
                task,
                List.of(complete),
                name -> {
                  reads.add(name);
                  return null;
                }))
        .containsOnlyKeys("job-1");
    assertThat(reads).as("the cache holds it: no read").isEmpty();

    assertThat(
            jobs.of(
                task,
                List.of(),
                name -> {
                  reads.add(name);
                  return complete;
                }))
        .containsEntry("job-1", complete);
    assertThat(reads).containsExactly("job-1");
  }

  /** A Job task whose Job job-1 was created. */
  private DelayedTask running() {
    DelayedTask task =
        scheduled(
            task(
                s -> {
                  s.setRunAt(DUE.toString());
                  s.setJobTemplate(Tasks.jobTemplate());
                }));
    Job created = job("job-1", task, null, null);
    TaskFacts facts = facts(task, Optional.of(claim(task, DUE)));
    task.setStatus(
        decider.decide(facts.withJobCreation(new JobCreation.Created(created))).status());
    return task;
  }

  private static ClaimedEntry claim(DelayedTask task, Instant claimedAt) {
    return new ClaimedEntry(ScheduleIds.idOf(task), DUE, claimedAt, "op:0:1", System.nanoTime());
  }

  private static Job job(String name, DelayedTask task, String conditionType, String reason) {
    Job job = JobFactory.jobFor(task, DUE, NOW);
    job.getMetadata().setName(name);
    if (conditionType != null) {
      job.setStatus(
          new JobStatusBuilder()
              .withConditions(
                  new JobConditionBuilder()
                      .withType(conditionType)
                      .withStatus("True")
                      .withReason(reason)
                      .build())
              .build());
    }
    return job;
  }

  private static String condition(Plan plan, String type) {
    return Conditions.find(plan.status(), type).map(Condition::getStatus).orElse(null);
  }
}
