package io.delayedtask.operator.task.spec;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import java.util.Optional;

/**
 * Rules of a task's spec that another package owns (the delivery package's, for {@code spec.sink},
 * {@code spec.delivery} and the event): {@link SpecValidator} asks them after its own, so that each
 * rule lives beside the code that acts on the field.
 */
public interface SpecRules {
  /** Rules that refuse nothing: a validator for specs without a sink. */
  SpecRules NONE =
      new SpecRules() {
        @Override
        public Optional<Validation.Invalid> refusal(DelayedTask task) {
          return Optional.empty();
        }

        @Override
        public boolean settled(DelayedTask task) {
          return true;
        }
      };

  /** Why these rules refuse the task's spec (the message names the field and the fix), or empty. */
  Optional<Validation.Invalid> refusal(DelayedTask task);

  /**
   * False while the verdict on this spec may still change without a new generation (a kind this
   * operator has not resolved yet): it is then not remembered, and asked again.
   */
  boolean settled(DelayedTask task);
}
