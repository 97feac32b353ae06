package io.delayedtask.operator.sink;

import io.delayedtask.operator.api.v1alpha1.Condition;
import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.DelayedTaskStatus;
import io.delayedtask.operator.api.v1alpha1.DeliveryStatus;
import io.delayedtask.operator.api.v1alpha1.Destination;
import io.delayedtask.operator.api.v1alpha1.Phase;
import io.delayedtask.operator.decision.ClaimVerdict;
import io.delayedtask.operator.decision.DeliveryCount;
import io.delayedtask.operator.decision.ScheduleChange;
import io.delayedtask.operator.decision.TaskEvent;
import io.delayedtask.operator.schedule.ClaimedEntry;
import io.delayedtask.operator.sink.DeliveryOutcome.Target;
import io.delayedtask.operator.task.status.Conditions;
import io.delayedtask.operator.task.status.TaskState;
import io.delayedtask.operator.task.time.Times;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The sink half of the reconciler's {@code TaskDecider}: when to send a task's next delivery
 * attempt, and what its outcome makes of the task (docs/reference.md, "Delivering to a service").
 * Plain functions of a {@link SinkTask}, like the rest of the decider: each writes the task's
 * desired status and returns a {@link DeliveryPlan}, the parts of the decider's plan it decides.
 *
 * <p>The attempts of one due time are counted across both targets in {@code
 * status.delivery.attempts}: the sink gets {@code retry + 1}, then (after the final failure) the
 * dead-letter sink as many. An attempt is sent from a claim; while it is in flight its schedule
 * entry waits at a safety net ({@link #SAFETY_MARGIN} after the attempt's timeout), so a crash
 * before its answer was recorded sends the same attempt again, with the same {@code ce-id}. The
 * answer is recorded with one status write, and the entry moves to the next attempt's time (Redis
 * clock) or goes.
 */
public final class DeliveryDecisions {
  /** How long after an attempt's timeout its entry comes due again if no answer was recorded. */
  public static final Duration SAFETY_MARGIN = Duration.ofSeconds(15);

  /** The Event reason of an attempt the sink took (Normal). */
  public static final String DELIVERED = "Delivered";

  /** The Event reason of a failed attempt, retried or not (Warning). */
  public static final String DELIVERY_FAILED = "DeliveryFailed";

  /** The Event reason of an attempt the dead-letter sink took (Normal). */
  public static final String DEAD_LETTERED = "DeadLettered";

  /**
   * A sink task as a decision sees it: the task, its current status, the status being decided
   * (written here), the reconcile's time and the task's generation, the claim the reconcile was
   * woken by, whether a request of it is in flight, and whether the admission policy is missing.
   */
  public record SinkTask(
      DelayedTask task,
      DelayedTaskStatus current,
      DelayedTaskStatus desired,
      Instant now,
      Long generation,
      Optional<ClaimedEntry> claim,
      boolean inFlight,
      boolean admissionPolicyMissing) {
    public SinkTask {
      Objects.requireNonNull(task, "task");
      Objects.requireNonNull(desired, "desired");
      Objects.requireNonNull(now, "now");
      Objects.requireNonNull(claim, "claim");
    }

    Phase currentPhase() {
      return current == null ? null : current.getPhase();
    }
  }

  /**
   * Requests sent so far for the status's due time (0 for a task that is not a sink's, or not yet
   * sent).
   */
  public static int attemptsSoFar(DelayedTaskStatus status) {
    return status == null
            || status.getDelivery() == null
            || status.getDelivery().getAttempts() == null
        ? 0
        : status.getDelivery().getAttempts();
  }

  /**
   * Whether an attempt's outcome is the one the task waits for: of the due time its status records
   * (still the spec's), and the attempt after those recorded. Any other (a late answer for an older
   * due time, an attempt already recorded) is dropped.
   */
  public static boolean isAwaited(DeliveryOutcome outcome, DelayedTaskStatus current, Instant due) {
    return outcome.due().equals(due)
        && Times.format(due).equals(current == null ? null : current.getDueTime())
        && outcome.attempt() == attemptsSoFar(current) + 1;
  }

  /**
   * Requests the sink got before its delivery failed for good ({@code
   * status.delivery.sinkAttempts}), or empty while it is still tried. The sink may fail before its
   * retries run out (a 400 on its first attempt), so the dead-letter sink's attempts are counted
   * from this, never from {@code retry + 1}. A status written before the field was kept says it by
   * its phase: {@code Failed} with at most {@code retry + 1} attempts the sink's, more the
   * dead-letter sink's.
   */
  static Optional<Integer> sinkAttempts(DelayedTaskStatus status, int perTarget) {
    if (status == null || status.getDelivery() == null) {
      return Optional.empty();
    }
    if (status.getDelivery().getSinkAttempts() != null) {
      return Optional.of(status.getDelivery().getSinkAttempts());
    }
    return status.getPhase() == Phase.Failed
        ? Optional.of(Math.min(attemptsSoFar(status), perTarget))
        : Optional.empty();
  }

  /** A claim of a sink task: send its next attempt, unless there is none or it is not time yet. */
  public DeliveryPlan sendNext(SinkTask draft, Instant due, ClaimedEntry claim) {
    DeliverySettings settings = DeliverySettings.of(draft.task().getSpec().getDelivery());
    if (draft.inFlight()) {
      // A request of this task is still queued or waiting for its answer: look again after its
      // timeout.
      return DeliveryPlan.claim(
          ClaimVerdict.HandBack.until(claim.claimedAt().plus(settings.timeout())));
    }
    // A retry's time is its entry's Redis-clock score (the attempt's end plus the backoff), so the
    // wait is measured on one clock; the due time itself was checked on both at the first attempt.
    int attempts = attemptsSoFar(draft.current());
    int perTarget = settings.attemptsPerTarget();
    boolean sinkFailed = draft.currentPhase() == Phase.Failed;
    Destination deadLetterSink = deadLetterSink(draft);
    DeliveryAttempt attempt;
    if (!sinkFailed && attempts < perTarget) {
      if (draft.admissionPolicyMissing()
          && draft.task().getSpec().getSink().getAudience() != null) {
        // Fail closed: the sink's token acts with the operator's right to request it (the
        // dead-letter
        // sink carries no audience, so it is never held back).
        return DeliveryPlan.awaitAdmission(claim, "spec.sink.audience: no token is sent");
      }
      if (draft.admissionPolicyMissing() && draft.task().getSpec().getSink().getSigning() != null) {
        // Fail closed: a signature made with a Secret the author may not read would be an oracle
        // for it.
        return DeliveryPlan.awaitAdmission(claim, "spec.sink.signing: nothing is signed");
      }
      attempt =
          new DeliveryAttempt(
              Target.SINK, attempts + 1, attempts + 1, settings.timeout(), Map.of());
    } else if (sinkFailed
        && deadLetterSink != null
        && !deadLettered(draft.current())
        && attempts - sinkAttempts(draft.current(), perTarget).orElse(attempts) < perTarget) {
      if (draft.admissionPolicyMissing() && deadLetterSink.getSigning() != null) {
        return DeliveryPlan.awaitAdmission(
            claim, "spec.delivery.deadLetterSink.signing: nothing is signed");
      }
      String code =
          String.valueOf(
              Optional.ofNullable(draft.current().getDelivery().getResponseCode()).orElse(0));
      int deadLetterAttempt =
          attempts - sinkAttempts(draft.current(), perTarget).orElse(attempts) + 1;
      attempt =
          new DeliveryAttempt(
              Target.DEAD_LETTER_SINK,
              attempts + 1,
              deadLetterAttempt,
              settings.timeout(),
              Map.of("delayedtaskerrorcode", code));
    } else {
      return DeliveryPlan.claim(ClaimVerdict.Settle.stale());
    }
    Instant safetyNet = claim.claimedAt().plus(settings.timeout()).plus(SAFETY_MARGIN);
    return DeliveryPlan.send(attempt, safetyNet);
  }

  /**
   * A retry (or the dead-letter sink's turn) waits and no claim came with this reconcile: keep the
   * status, except around a suspension: suspended, the entry goes; resumed, it comes back at the
   * recorded time (or at once when that has passed).
   */
  public DeliveryPlan awaitingAttempt(SinkTask draft, Instant due) {
    boolean suspend = draft.task().getSpec().isSuspended();
    Instant next = TaskState.nextAttempt(draft.current()).orElse(due);
    if (suspend) {
      if (draft.currentPhase() == Phase.Suspended) {
        return DeliveryPlan.claim(ClaimVerdict.Settle.stale());
      }
      draft.desired().setPhase(Phase.Suspended);
      Conditions.set(
          draft.desired(),
          Condition.SCHEDULED,
          false,
          "Suspended",
          "spec.suspend is true",
          draft.now(),
          draft.generation());
      return DeliveryPlan.scheduleAndClaim(ScheduleChange.REMOVE, ClaimVerdict.Settle.stale());
    }
    if (draft.currentPhase() == Phase.Suspended) {
      int perTarget = DeliverySettings.of(draft.task().getSpec().getDelivery()).attemptsPerTarget();
      boolean sinkDone =
          draft.current().getDelivery() != null
                  && draft.current().getDelivery().getSinkAttempts() != null
              || attemptsSoFar(draft.current()) >= perTarget;
      draft.desired().setPhase(sinkDone ? Phase.Failed : Phase.Running);
      return DeliveryPlan.schedule(
          new ScheduleChange.Write(next.isBefore(draft.now()) ? draft.now() : next));
    }
    Optional<ClaimedEntry> claim = draft.claim();
    return claim.isPresent()
        ? sendNext(draft, due, claim.get())
        : DeliveryPlan.schedule(ScheduleChange.KEEP);
  }

  /**
   * An attempt's outcome, the one after {@code status.delivery.attempts}: record it and plan the
   * next.
   */
  public DeliveryPlan record(SinkTask draft, DeliveryOutcome outcome) {
    DeliverySettings settings = DeliverySettings.of(draft.task().getSpec().getDelivery());
    DelayedTaskStatus desired = draft.desired();
    int perTarget = settings.attemptsPerTarget();
    int targetAttempt =
        outcome.target() == Target.SINK
            ? outcome.attempt()
            : outcome.attempt() - sinkAttempts(draft.current(), perTarget).orElse(perTarget);
    RetryPolicy.Verdict verdict = verdict(outcome.result());
    Optional<Integer> code = answerCode(outcome.result());

    DeliveryStatus delivery = new DeliveryStatus(desired.getDelivery());
    delivery.setAttempts(outcome.attempt());
    delivery.setLastAttemptTime(Times.format(outcome.result().at()));
    delivery.setNextAttemptTime(null);
    if (outcome.target() == Target.SINK) {
      delivery.setResponseCode(code.orElse(null));
    }
    desired.setDelivery(delivery);
    if (sentTo(outcome.url())) {
      desired.setSinkUri(outcome.url()); // Knative's status.sinkUri: where this attempt went
    }
    if (desired.getFiredTime() == null) {
      desired.setFiredTime(Times.format(outcome.result().at()));
      Conditions.set(
          desired,
          Condition.SCHEDULED,
          false,
          "Fired",
          "fired at " + desired.getFiredTime(),
          draft.now(),
          draft.generation());
      Conditions.set(
          desired,
          Condition.FIRED,
          true,
          "Delivering",
          "first delivery attempt at " + desired.getFiredTime(),
          draft.now(),
          draft.generation());
    }
    String what =
        (outcome.target() == Target.SINK ? "" : "the dead-letter sink: ")
            + "POST "
            + outcome.url()
            + " "
            + describe(outcome.result())
            + " on attempt "
            + targetAttempt
            + " of "
            + perTarget;
    boolean retriesLeft = targetAttempt < perTarget;

    if (verdict == RetryPolicy.Verdict.DELIVERED) {
      TaskEvent event;
      if (outcome.target() == Target.SINK) {
        desired.setPhase(Phase.Succeeded);
        desired.setMessage(null);
        Conditions.set(
            desired, Condition.COMPLETE, true, "Delivered", what, draft.now(), draft.generation());
        event = TaskEvent.normal(DELIVERED, "Delivered: " + what);
      } else {
        delivery.setDeadLettered(true);
        event = TaskEvent.normal(DEAD_LETTERED, "Dead-lettered: " + what);
      }
      return DeliveryPlan.recorded(
          ScheduleChange.REMOVE,
          outcome.target() == Target.SINK ? DeliveryCount.DELIVERED : DeliveryCount.DEAD_LETTERED,
          event);
    }
    if (verdict == RetryPolicy.Verdict.RETRY && retriesLeft) {
      Duration wait =
          RetryPolicy.backoff(
              settings.backoff(), settings.delay(), targetAttempt, retryAfter(outcome.result()));
      delivery.setNextAttemptTime(Times.format(endOf(outcome.result()).plus(wait)));
      if (outcome.target() == Target.SINK) {
        desired.setPhase(Phase.Running);
        desired.setMessage(null);
      }
      return DeliveryPlan.recorded(
          new ScheduleChange.Write(outcome.redisTimeAtEnd().plus(wait)),
          DeliveryCount.RETRY,
          TaskEvent.warning(DELIVERY_FAILED, what + "; retrying in " + wait.toMillis() + " ms"));
    }
    TaskEvent failed = TaskEvent.warning(DELIVERY_FAILED, what);
    if (outcome.target() == Target.DEAD_LETTER_SINK) {
      return DeliveryPlan.recorded(
          ScheduleChange.REMOVE,
          DeliveryCount.FAILED,
          failed); // the task stays Failed with the sink's message
    }
    delivery.setSinkAttempts(
        outcome.attempt()); // the dead-letter sink's attempts are counted after these
    desired.setPhase(Phase.Failed);
    desired.setMessage(what);
    Conditions.set(
        desired, Condition.FAILED, true, "DeliveryFailed", what, draft.now(), draft.generation());
    if (deadLetterSink(draft) != null) {
      delivery.setNextAttemptTime(Times.format(draft.now()));
      return DeliveryPlan.recorded(
          new ScheduleChange.Write(outcome.redisTimeAtEnd()), DeliveryCount.FAILED, failed);
    }
    return DeliveryPlan.recorded(ScheduleChange.REMOVE, DeliveryCount.FAILED, failed);
  }

  /**
   * Whether an outcome's url is a URL the attempt was sent (or meant to be sent) to: a destination
   * that could not be resolved (a missing Service, an Addressable without an address) is described
   * by name instead, and then the last URL stays.
   */
  private static boolean sentTo(String url) {
    return url.startsWith("http://") || url.startsWith("https://");
  }

  /**
   * When the attempt ended, on this host's clock: its answer (or failure), or when it could not
   * start.
   */
  private static Instant endOf(DeliveryOutcome.Result result) {
    return result instanceof DeliveryOutcome.Result.Sent sent
        ? sent.result().sentAt().plus(sent.result().took())
        : result.at();
  }

  private static RetryPolicy.Verdict verdict(DeliveryOutcome.Result result) {
    if (result instanceof DeliveryOutcome.Result.Sent sent) {
      return RetryPolicy.verdict(sent.result());
    }
    return ((DeliveryOutcome.Result.NotSent) result).retryable()
        ? RetryPolicy.Verdict.RETRY
        : RetryPolicy.Verdict.FAIL;
  }

  private static Optional<Integer> answerCode(DeliveryOutcome.Result result) {
    return result instanceof DeliveryOutcome.Result.Sent sent
            && sent.result() instanceof DeliveryResult.Answered a
        ? Optional.of(a.status())
        : Optional.empty();
  }

  private static Optional<Duration> retryAfter(DeliveryOutcome.Result result) {
    return result instanceof DeliveryOutcome.Result.Sent sent
            && sent.result() instanceof DeliveryResult.Answered a
        ? a.retryAfter()
        : Optional.empty();
  }

  /** "answered 503", "got no answer (timeout)", "was refused: ...", or why it was not sent. */
  private static String describe(DeliveryOutcome.Result result) {
    if (result instanceof DeliveryOutcome.Result.NotSent notSent) {
      return "was not sent (" + notSent.why() + ")";
    }
    DeliveryResult sent = ((DeliveryOutcome.Result.Sent) result).result();
    if (sent instanceof DeliveryResult.Answered answered) {
      return "answered " + answered.status();
    }
    if (sent instanceof DeliveryResult.NoAnswer noAnswer) {
      return "got no answer (" + noAnswer.why() + ")";
    }
    return "was not sent: the address is forbidden ("
        + ((DeliveryResult.Forbidden) sent).rule()
        + ")";
  }

  private static Destination deadLetterSink(SinkTask draft) {
    var delivery = draft.task().getSpec().getDelivery();
    return delivery == null ? null : delivery.getDeadLetterSink();
  }

  private static boolean deadLettered(DelayedTaskStatus status) {
    return status != null
        && status.getDelivery() != null
        && Boolean.TRUE.equals(status.getDelivery().getDeadLettered());
  }
}
