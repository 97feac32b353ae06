package io.delayedtask.operator.sink;

import java.time.Duration;
import java.util.Map;

/**
 * One request to send: to which target, the how-many-th request of this due time it is ({@code
 * attempt}, across targets), its {@code ce-delayedtaskattempt} ({@code targetAttempt}), its time
 * limit, and the extra CloudEvent extensions (the dead-letter sink's error headers).
 */
public record DeliveryAttempt(
    DeliveryOutcome.Target target,
    int attempt,
    int targetAttempt,
    Duration timeout,
    Map<String, String> extensions) {
  public DeliveryAttempt {
    extensions = Map.copyOf(extensions);
  }
}
