package io.delayedtask.operator.task.status;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.DelayedTaskStatus;
import io.delayedtask.operator.task.time.Times;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The annotation {@code delayedtask.io/fire-now: "<RFC 3339 time>"}: fire the task at once, as if
 * that time were its due time, once per distinct value ({@code status.fireNowHandled} records the
 * value acted on). A person's explicit act: it fires a suspended task too, and one its queue holds.
 */
public final class FireNow {
  public static final String ANNOTATION = "delayedtask.io/fire-now";

  /** RFC 3339 with its offset (the annotation has no time zone to read a wall-clock time in). */
  private static final Pattern RFC3339 =
      Pattern.compile(
          "[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]{1,9})?([Zz]|[+-][0-9]{2}:[0-9]{2})");

  private FireNow() {}

  /** A value of the annotation not yet acted on: a time to fire at, or a value that is none. */
  public sealed interface Request {
    /** The annotation's value as written. */
    String value();

    /** Fire now, as if {@code due} were the due time. */
    record At(String value, Instant due) implements Request {}

    /** Not an RFC 3339 time: a Warning Event, nothing fires. */
    record Malformed(String value) implements Request {}
  }

  /** The annotation's value, if the task has it. */
  public static Optional<String> annotation(DelayedTask task) {
    Map<String, String> annotations =
        task.getMetadata() == null ? null : task.getMetadata().getAnnotations();
    return Optional.ofNullable(annotations == null ? null : annotations.get(ANNOTATION));
  }

  /** The annotation's value when it differs from the one the status says was handled. */
  public static Optional<Request> pending(DelayedTask task) {
    DelayedTaskStatus status = task.getStatus();
    String handled = status == null ? null : status.getFireNowHandled();
    return annotation(task).filter(value -> !Objects.equals(value, handled)).map(FireNow::parse);
  }

  static Request parse(String value) {
    String trimmed = value.trim();
    if (!RFC3339.matcher(trimmed).matches()) {
      return new Request.Malformed(value);
    }
    try {
      Instant due = OffsetDateTime.parse(trimmed.toUpperCase(java.util.Locale.ROOT)).toInstant();
      return due.isAfter(Times.LATEST) ? new Request.Malformed(value) : new Request.At(value, due);
    } catch (DateTimeParseException e) {
      return new Request.Malformed(value); // 2026-02-30T...
    }
  }

  /**
   * True when the status says the task fired (or finished) for {@code due}: then a fire-now does
   * nothing but a Warning Event. A sink task whose retry waits has fired already.
   */
  public static boolean firedFor(DelayedTaskStatus status, Instant due) {
    if (status == null || !Times.format(due).equals(status.getDueTime())) {
      return false;
    }
    return TaskState.handledFor(status, due)
        || status.getFiredTime() != null
        || TaskState.nextAttempt(status).isPresent();
  }

  /**
   * The message of the Warning Event for a value that is not a time, naming the annotation and the
   * fix.
   */
  public static String malformedMessage(String value) {
    return "the annotation "
        + ANNOTATION
        + " must be an RFC 3339 time such as 2026-12-03T07:00:00Z (not \""
        + shown(value)
        + "\"); nothing fired: set it to the time to fire as, for example the current time";
  }

  private static String shown(String value) {
    return value.length() <= 64 ? value : value.substring(0, 64) + "...";
  }
}
