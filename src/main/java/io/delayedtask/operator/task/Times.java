package io.delayedtask.operator.task;

import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;

/** The contract's time format: UTC, always three fraction digits (2026-12-03T07:00:00.000Z). */
public final class Times {
  private static final DateTimeFormatter FORMAT =
      DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSS'Z'").withZone(ZoneOffset.UTC);

  private Times() {}

  public static String format(Instant instant) {
    return FORMAT.format(instant.truncatedTo(ChronoUnit.MILLIS));
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
