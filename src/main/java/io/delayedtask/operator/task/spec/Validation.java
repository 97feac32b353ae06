package io.delayedtask.operator.task.spec;

import java.time.Instant;
import java.util.Objects;

/** The verdict on a spec: valid with its due time, or invalid with a message for status.message. */
public sealed interface Validation {

  record Valid(Instant due) implements Validation {
    public Valid {
      Objects.requireNonNull(due);
    }
  }

  record Invalid(String message) implements Validation {
    public Invalid {
      Objects.requireNonNull(message);
    }
  }
}
