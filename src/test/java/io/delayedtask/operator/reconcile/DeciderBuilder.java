package io.delayedtask.operator.reconcile;

import io.delayedtask.operator.sink.SinkSpecRules;
import io.delayedtask.operator.task.lifetime.SecondsSetting;
import io.delayedtask.operator.task.spec.SpecValidator;
import java.util.Optional;

/**
 * The decider as the operator builds it with its defaults (the sink rules' defaults, no TTL for
 * finished tasks, no operator-wide starting deadline), with what a test changes named.
 */
final class DeciderBuilder {
  private Optional<Long> defaultFinishedTtlSeconds = Optional.empty();
  private Optional<Long> defaultStartingDeadlineSeconds = Optional.empty();

  private DeciderBuilder() {}

  static DeciderBuilder taskDecider() {
    return new DeciderBuilder();
  }

  /**
   * The TTL after finishing of a task that sets none (the operator's
   * DELAYEDTASK_FINISHED_TTL_SECONDS).
   */
  DeciderBuilder defaultFinishedTtlSeconds(long seconds) {
    this.defaultFinishedTtlSeconds = Optional.of(seconds);
    return this;
  }

  /** The starting deadline of a task that sets none (the operator-wide default). */
  DeciderBuilder defaultStartingDeadlineSeconds(long seconds) {
    this.defaultStartingDeadlineSeconds = Optional.of(seconds);
    return this;
  }

  TaskDecider build() {
    return new TaskDecider(
        new SpecValidator(SinkSpecRules.defaults()),
        SecondsSetting.finishedTtl(defaultFinishedTtlSeconds),
        SecondsSetting.startingDeadline(defaultStartingDeadlineSeconds));
  }
}
