package io.delayedtask.operator.task.time;

import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;

/** The contract's time format: UTC, always three fraction digits (2026-12-03T07:00:00.000Z). */
public final class Times {
  private static final DateTimeFormatter FORMAT =
      DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSS'Z'").withZone(ZoneOffset.UTC);

  /**
   * The latest time this format writes: four-digit years, so a later due time could not be recorded
   * in status.
   */
  public static final Instant LATEST = Instant.parse("9999-12-31T23:59:59.999Z");

  private Times() {}

  public static String format(Instant instant) {
    return FORMAT.format(instant.truncatedTo(ChronoUnit.MILLIS));
  }

  /**
   * {@code instant} plus {@code seconds}, or {@link Instant#MAX} ({@link Instant#MIN} for a
   * negative amount) where the sum leaves Instant's range: a deadline or TTL that far away never
   * comes, and must not throw on every decision of the task.
   */
  public static Instant plusSecondsCapped(Instant instant, long seconds) {
    try {
      return instant.plusSeconds(seconds);
    } catch (java.time.DateTimeException | ArithmeticException e) {
      return seconds >= 0 ? Instant.MAX : Instant.MIN;
    }
  }

  /** Parses a time this operator wrote (or any ISO instant); null when absent or unreadable. */
  public static Instant parseOrNull(String value) {
    if (value == null || value.isBlank()) {
      return null;
    }
    try {
      return java.time.OffsetDateTime.parse(value).toInstant();
    } catch (java.time.format.DateTimeParseException e) {
      return null;
    }
  }
}
