package io.delayedtask.operator.sink;

import static org.assertj.core.api.Assertions.assertThat;

import io.delayedtask.operator.sink.RetryPolicy.Backoff;
import io.delayedtask.operator.sink.RetryPolicy.Verdict;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

class RetryPolicyTest {
  private static final Instant SENT = Instant.parse("2026-12-03T07:00:00Z");

  @ParameterizedTest(name = "{0} -> {1}")
  @CsvSource({
    "200, DELIVERED",
    "201, DELIVERED",
    "202, DELIVERED",
    "204, DELIVERED",
    "299, DELIVERED",
    "404, RETRY",
    "408, RETRY",
    "409, RETRY",
    "425, RETRY",
    "429, RETRY",
    "500, RETRY",
    "502, RETRY",
    "503, RETRY",
    "504, RETRY",
    "599, RETRY",
    "100, FAIL",
    "101, FAIL",
    "301, FAIL",
    "302, FAIL",
    "307, FAIL",
    "308, FAIL",
    "400, FAIL",
    "401, FAIL",
    "403, FAIL",
    "405, FAIL",
    "410, FAIL",
    "413, FAIL",
    "422, FAIL",
    "499, FAIL",
    "600, FAIL"
  })
  void answers(int status, Verdict expected) {
    DeliveryResult answered =
        new DeliveryResult.Answered(SENT, Duration.ofMillis(5), status, Optional.empty());
    assertThat(RetryPolicy.verdict(answered)).isEqualTo(expected);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("failuresWithoutAnswer")
  void failuresWithoutAnAnswer(DeliveryResult result, Verdict expected) {
    assertThat(RetryPolicy.verdict(result)).isEqualTo(expected);
  }

  static Stream<Arguments> failuresWithoutAnswer() {
    return Stream.of(
        Arguments.of(
            new DeliveryResult.NoAnswer(SENT, Duration.ofSeconds(10), "no answer within 10s"),
            Verdict.RETRY),
        Arguments.of(
            new DeliveryResult.NoAnswer(SENT, Duration.ZERO, "connection refused"), Verdict.RETRY),
        Arguments.of(
            new DeliveryResult.Forbidden(SENT, Duration.ZERO, "169.254.169.254 is link-local"),
            Verdict.FAIL));
  }

  @ParameterizedTest(name = "{0} {1} after attempt {2}, Retry-After {3} -> {4}")
  @MethodSource("backoffs")
  void backoff(
      Backoff policy,
      Duration delay,
      int failedAttempt,
      Optional<Duration> retryAfter,
      Duration expected) {
    assertThat(RetryPolicy.backoff(policy, delay, failedAttempt, retryAfter)).isEqualTo(expected);
  }

  static Stream<Arguments> backoffs() {
    Duration second = Duration.ofSeconds(1);
    Optional<Duration> none = Optional.empty();
    return Stream.of(
        Arguments.of(Backoff.LINEAR, second, 1, none, Duration.ofSeconds(1)),
        Arguments.of(Backoff.LINEAR, second, 2, none, Duration.ofSeconds(2)),
        Arguments.of(Backoff.LINEAR, second, 5, none, Duration.ofSeconds(5)),
        Arguments.of(Backoff.EXPONENTIAL, second, 1, none, Duration.ofSeconds(1)),
        Arguments.of(Backoff.EXPONENTIAL, second, 2, none, Duration.ofSeconds(2)),
        Arguments.of(Backoff.EXPONENTIAL, second, 3, none, Duration.ofSeconds(4)),
        Arguments.of(Backoff.EXPONENTIAL, Duration.ofMillis(250), 5, none, Duration.ofSeconds(4)),
        // Retry-After raises the wait, never lowers it.
        Arguments.of(
            Backoff.EXPONENTIAL,
            second,
            1,
            Optional.of(Duration.ofSeconds(3)),
            Duration.ofSeconds(3)),
        Arguments.of(
            Backoff.EXPONENTIAL,
            second,
            4,
            Optional.of(Duration.ofSeconds(3)),
            Duration.ofSeconds(8)),
        Arguments.of(Backoff.LINEAR, second, 1, Optional.of(Duration.ZERO), Duration.ofSeconds(1)),
        // Retry-After asks for at most 10 minutes.
        Arguments.of(
            Backoff.LINEAR, second, 1, Optional.of(Duration.ofHours(5)), Duration.ofMinutes(10)),
        Arguments.of(
            Backoff.LINEAR, second, 1, Optional.of(Duration.ofSeconds(-4)), Duration.ofSeconds(1)),
        // No overflow: 1s x 2^99 and a huge linear product saturate.
        Arguments.of(Backoff.EXPONENTIAL, second, 100, none, RetryPolicy.LONGEST),
        Arguments.of(
            Backoff.EXPONENTIAL, second, 65, none, RetryPolicy.LONGEST), // a bare 1L << 64 is 1
        Arguments.of(Backoff.EXPONENTIAL, Duration.ofDays(1), 64, none, RetryPolicy.LONGEST),
        Arguments.of(
            Backoff.LINEAR, Duration.ofSeconds(Long.MAX_VALUE / 2), 100, none, RetryPolicy.LONGEST),
        Arguments.of(Backoff.EXPONENTIAL, Duration.ZERO, 100, none, Duration.ZERO));
  }

  @org.junit.jupiter.api.Test
  void theLongestBackoffStillFitsAnInstant() {
    assertThat(Instant.now().plus(RetryPolicy.LONGEST)).isAfter(Instant.now());
  }
}
