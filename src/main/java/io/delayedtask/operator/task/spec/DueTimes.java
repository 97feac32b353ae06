package io.delayedtask.operator.task.spec;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.DelayedTaskStatus;
import io.delayedtask.operator.api.v1alpha1.Phase;
import io.delayedtask.operator.task.time.Durations;
import io.delayedtask.operator.task.time.Times;
import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoUnit;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * A task's due time: from {@code spec.runAt} (an RFC 3339 time, or wall-clock time in {@code
 * spec.timeZone}) or from {@code spec.delay} counted from {@code metadata.creationTimestamp}, to
 * the millisecond, between 1970 and the year 10000; and the due time its status records.
 */
final class DueTimes {
  static final String RUN_AT_EXAMPLE = "an RFC 3339 time such as 2026-12-03T07:00:00Z";
  static final String TIME_ZONE_EXAMPLE =
      "an IANA time zone such as Europe/Berlin, America/New_York or Etc/UTC";

  /**
   * RFC 3339 date-time: seconds required, fraction and offset allowed, 'T' and 'Z' in either case.
   */
  private static final Pattern RFC3339 =
      Pattern.compile(
          "[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]{1,9})?([Zz]|[+-][0-9]{2}:[0-9]{2})");

  /** The same without the offset: wall-clock time, allowed with spec.timeZone. */
  private static final Pattern LOCAL_DATE_TIME =
      Pattern.compile("[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]{1,9})?");

  /**
   * The JDK's region ids, read once: {@link ZoneId#getAvailableZoneIds()} builds a new set per
   * call.
   */
  private static final Set<String> ZONE_IDS = Set.copyOf(ZoneId.getAvailableZoneIds());

  private DueTimes() {}

  /**
   * The zone of an IANA name, or null when there is none: only region ids, so neither an offset
   * (+01:00) nor a prefixed one (UTC+1), which ZoneId.of would take, is accepted; the CRD's rule on
   * spec.timeZone lets every region id through (GeneratedCrdTest).
   */
  static ZoneId knownZone(String name) {
    return ZONE_IDS.contains(name) ? ZoneId.of(name) : null;
  }

  /**
   * The due time {@code spec.runAt} names, in {@code zone} when it has no offset (zone may be
   * null).
   */
  static Validation fromRunAt(String runAt, ZoneId zone) {
    String value = runAt.trim();
    if (zone != null && LOCAL_DATE_TIME.matcher(value).matches()) {
      return fromWallClock(runAt, value, zone);
    }
    if (!RFC3339.matcher(value).matches()) {
      String hint =
          value.matches(".*[Tt ][0-9]{2}:[0-9]{2}(:[0-9]{2})?(\\.[0-9]+)?")
              ? "it has no time zone; add Z or an offset such as +01:00, or set spec.timeZone to "
                  + TIME_ZONE_EXAMPLE
              : "use "
                  + RUN_AT_EXAMPLE
                  + " (offsets such as +01:00 and fractions such as .5 are allowed)";
      return invalid("spec.runAt '" + runAt + "' is not an RFC 3339 time: " + hint);
    }
    Instant due;
    try {
      due = OffsetDateTime.parse(value.toUpperCase(Locale.ROOT)).toInstant();
    } catch (DateTimeParseException e) {
      return invalid(
          "spec.runAt '"
              + runAt
              + "' is not a real date and time (check the month, day, hour, "
              + "minute, second and offset); use "
              + RUN_AT_EXAMPLE);
    }
    return within(due.truncatedTo(ChronoUnit.MILLIS), "spec.runAt '" + runAt + "'");
  }

  /**
   * Wall-clock time in the zone. ofLocal with no preferred offset resolves both DST changes as the
   * contract says: a time in the gap (clocks jump forward) moves forward by the gap's length, one
   * in the overlap (clocks go back) takes the earlier offset, i.e. the earlier instant.
   */
  private static Validation fromWallClock(String runAt, String value, ZoneId zone) {
    LocalDateTime local;
    try {
      local = LocalDateTime.parse(value.toUpperCase(Locale.ROOT));
    } catch (DateTimeParseException e) {
      return invalid(
          "spec.runAt '"
              + runAt
              + "' is not a real date and time (check the month, day, hour, "
              + "minute and second); use a wall-clock time such as 2026-12-03T07:00:00");
    }
    Instant due;
    try {
      due = ZonedDateTime.ofLocal(local, zone, null).toInstant();
    } catch (DateTimeException e) {
      return invalid(
          "spec.runAt '"
              + runAt
              + "' in "
              + zone
              + " is out of range; use a time before the year 10000");
    }
    return within(due.truncatedTo(ChronoUnit.MILLIS), "spec.runAt '" + runAt + "' in " + zone);
  }

  /** The due time {@code spec.delay} after the task's creation. */
  static Validation fromDelay(DelayedTask task, String delay) {
    Duration duration;
    try {
      duration = Durations.parse(delay);
    } catch (Durations.BadDuration e) {
      return invalid(
          "spec.delay '"
              + delay
              + "' "
              + e.getMessage()
              + "; use a non-negative "
              + Durations.EXAMPLE);
    }
    Instant created =
        task.getMetadata() == null
            ? null
            : Times.parseOrNull(task.getMetadata().getCreationTimestamp());
    if (created == null) {
      return invalid(
          "metadata.creationTimestamp is missing or unreadable, so spec.delay has nothing to count "
              + "from; use spec.runAt instead");
    }
    Instant due;
    try {
      due = created.plus(duration);
    } catch (ArithmeticException | DateTimeException e) {
      return invalid(
          "spec.delay '" + delay + "' is too long; the due time must be before the year 10000");
    }
    return within(due.truncatedTo(ChronoUnit.MILLIS), "spec.delay '" + delay + "'");
  }

  /**
   * The due time the status records for the spec's current generation (null when none does, or the
   * task was judged Invalid).
   */
  static Instant recorded(DelayedTask task) {
    DelayedTaskStatus status = task.getStatus();
    Long generation = task.getMetadata() == null ? null : task.getMetadata().getGeneration();
    if (status == null
        || generation == null
        || !generation.equals(status.getObservedGeneration())
        || status.getPhase() == Phase.Invalid) {
      return null;
    }
    return Times.parseOrNull(status.getDueTime());
  }

  private static Validation within(Instant due, String what) {
    if (due.isAfter(Times.LATEST)) {
      return invalid(
          what + " is too far in the future; the due time must be before the year 10000");
    }
    if (due.isBefore(Instant.EPOCH)) {
      return invalid(what + " is before 1970; use a later time (a past time fires at once)");
    }
    return new Validation.Valid(due);
  }

  private static Validation invalid(String message) {
    return new Validation.Invalid(message);
  }
}
