package io.delayedtask.operator.sink;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * How one attempt went. The answer's body is never kept: only its status code (and Retry-After).
 * Which results are retried is {@link RetryPolicy}'s business, not the sender's.
 */
public sealed interface DeliveryResult {
  /** When the request was handed to the client (the task's firedTime for a first attempt). */
  Instant sentAt();

  /** How long the attempt took, until its answer or its failure. */
  Duration took();

  /**
   * The receiver answered with {@code status}; {@code retryAfter} from its Retry-After header, if
   * any.
   */
  record Answered(Instant sentAt, Duration took, int status, Optional<Duration> retryAfter)
      implements DeliveryResult {}

  /**
   * No answer: connection refused or reset, a timeout, a TLS failure; {@code why} is one short
   * phrase.
   */
  record NoAnswer(Instant sentAt, Duration took, String why) implements DeliveryResult {}

  /**
   * The guard refused to connect: every address the name resolved to is forbidden (link-local,
   * metadata, unspecified, loopback not allowed). Never retried. {@code rule} names the rule
   * broken, as a sentence fragment ("169.254.169.254 is link-local").
   */
  record Forbidden(Instant sentAt, Duration took, String rule) implements DeliveryResult {}
}
