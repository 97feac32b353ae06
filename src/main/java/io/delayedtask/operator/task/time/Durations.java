package io.delayedtask.operator.task.time;

import java.math.BigDecimal;
import java.time.Duration;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Parses spec.delay: Go-style durations ({@code 500ms}, {@code 45s}, {@code 10m}, {@code 1h30m},
 * {@code 1.5h}) and ISO-8601 time-based ones ({@code PT10M}, {@code P1DT2H}).
 */
public final class Durations {
  /** How a message that refuses a duration says what to write instead. */
  public static final String EXAMPLE = "a duration such as 500ms, 45s, 10m, 1h30m, 1.5h or PT10M";

  private static final Pattern GO_PART = Pattern.compile("([0-9]+(?:\\.[0-9]+)?)(ms|s|m|h)");
  private static final Pattern GO_WHOLE = Pattern.compile("(?:[0-9]+(?:\\.[0-9]+)?(?:ms|s|m|h))+");

  private Durations() {}

  /** A delay that cannot be understood; the message says what is wrong, for spec.delay. */
  public static final class BadDuration extends Exception {
    public BadDuration(String message) {
      super(message);
    }
  }

  public static Duration parse(String text) throws BadDuration {
    String value = text == null ? "" : text.trim();
    if (value.isEmpty()) {
      throw new BadDuration("is empty");
    }
    if (value.startsWith("-")) {
      throw new BadDuration("is negative");
    }
    if (value.startsWith("+")) {
      value = value.substring(1);
    }
    if (value.toUpperCase(Locale.ROOT).startsWith("P")) {
      return iso(value);
    }
    if (!GO_WHOLE.matcher(value).matches()) {
      throw new BadDuration("is not a duration");
    }
    BigDecimal nanos = BigDecimal.ZERO;
    Matcher part = GO_PART.matcher(value);
    while (part.find()) {
      BigDecimal amount = new BigDecimal(part.group(1));
      BigDecimal unitNanos =
          switch (part.group(2)) {
            case "ms" -> BigDecimal.valueOf(1_000_000L);
            case "s" -> BigDecimal.valueOf(1_000_000_000L);
            case "m" -> BigDecimal.valueOf(60_000_000_000L);
            default -> BigDecimal.valueOf(3_600_000_000_000L);
          };
      nanos = nanos.add(amount.multiply(unitNanos));
    }
    return ofNanos(nanos);
  }

  private static Duration iso(String value) throws BadDuration {
    try {
      Duration parsed = Duration.parse(value.toUpperCase(Locale.ROOT));
      if (parsed.isNegative()) {
        throw new BadDuration("is negative");
      }
      return parsed;
    } catch (java.time.format.DateTimeParseException | ArithmeticException e) {
      throw new BadDuration("is not an ISO-8601 duration");
    }
  }

  private static Duration ofNanos(BigDecimal nanos) throws BadDuration {
    BigDecimal[] secondsAndRest = nanos.divideAndRemainder(BigDecimal.valueOf(1_000_000_000L));
    try {
      long seconds = secondsAndRest[0].longValueExact();
      long rest = secondsAndRest[1].setScale(0, java.math.RoundingMode.DOWN).longValueExact();
      return Duration.ofSeconds(seconds, rest);
    } catch (ArithmeticException e) {
      throw new BadDuration("is too long");
    }
  }
}
