package io.delayedtask.operator.reconcile;

import io.delayedtask.operator.sink.DeliveryAttempt;
import io.delayedtask.operator.sink.DeliveryOutcome;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/**
 * The delivery request a decider test expects a plan to send: the how-many-th request of the due
 * time (across targets), to which target and the how-many-th to it, with the default 10 s limit and
 * no extra extensions unless named.
 */
final class AttemptBuilder {
  private final int attempt;
  private DeliveryOutcome.Target target = DeliveryOutcome.Target.SINK;
  private int targetAttempt;
  private final Duration timeout = Duration.ofSeconds(10);
  private final Map<String, String> extensions = new HashMap<>();

  private AttemptBuilder(int attempt) {
    this.attempt = attempt;
    this.targetAttempt = attempt;
  }

  /**
   * Request {@code attempt} of the due time, to the sink and its {@code attempt}-th there unless
   * named.
   */
  static AttemptBuilder request(int attempt) {
    return new AttemptBuilder(attempt);
  }

  /** To {@code target}, the {@code targetAttempt}-th request there. */
  AttemptBuilder to(DeliveryOutcome.Target target, int targetAttempt) {
    this.target = target;
    this.targetAttempt = targetAttempt;
    return this;
  }

  /** With a CloudEvent extension (the dead-letter sink's error headers). */
  AttemptBuilder extension(String name, String value) {
    extensions.put(name, value);
    return this;
  }

  DeliveryAttempt build() {
    return new DeliveryAttempt(target, attempt, targetAttempt, timeout, extensions);
  }
}
