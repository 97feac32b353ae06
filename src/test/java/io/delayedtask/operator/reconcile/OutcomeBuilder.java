package io.delayedtask.operator.reconcile;

import io.delayedtask.operator.sink.DeliveryOutcome;
import java.time.Instant;

/**
 * The outcome of one delivery attempt for a decider test: of the task's firing for a due time, the
 * how-many-th attempt, to the sink unless named otherwise, the URL it went to, when it ended on
 * Redis's clock, and what came of it.
 */
final class OutcomeBuilder {
  private final String uid;
  private final Instant due;
  private final int attempt;
  private DeliveryOutcome.Target target = DeliveryOutcome.Target.SINK;
  private String url;
  private Instant endedAt;
  private DeliveryOutcome.Result result;

  private OutcomeBuilder(String uid, Instant due, int attempt) {
    this.uid = uid;
    this.due = due;
    this.attempt = attempt;
  }

  /** Attempt {@code attempt} (across targets) of firing the task {@code uid} for {@code due}. */
  static OutcomeBuilder attemptOf(String uid, Instant due, int attempt) {
    return new OutcomeBuilder(uid, due, attempt);
  }

  /** Sent to {@code target} rather than the sink. */
  OutcomeBuilder to(DeliveryOutcome.Target target) {
    this.target = target;
    return this;
  }

  /** Where it went (or, not sent, what it was meant for). */
  OutcomeBuilder url(String url) {
    this.url = url;
    return this;
  }

  /** When it ended, on Redis's clock. */
  OutcomeBuilder endedAt(Instant endedAt) {
    this.endedAt = endedAt;
    return this;
  }

  OutcomeBuilder result(DeliveryOutcome.Result result) {
    this.result = result;
    return this;
  }

  DeliveryOutcome build() {
    return new DeliveryOutcome(uid, due, target, attempt, url, endedAt, result);
  }
}
