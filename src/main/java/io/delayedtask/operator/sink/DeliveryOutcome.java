package io.delayedtask.operator.sink;

import java.time.Instant;
import java.util.Objects;

/**
 * How one delivery attempt of a task went, waiting for the task's reconcile to record it: the
 * reconciler sends without waiting, and the answer comes back here ({@link DeliveryOutcomes}).
 *
 * @param uid the task it was sent for (a re-created task of the same name is another)
 * @param due the due time it was sent for
 * @param target the sink, or the dead-letter sink
 * @param attempt which request this was for the due time, counting every target (1, 2, ...):
 *     recorded only when it is the one after {@code status.delivery.attempts}
 * @param url where it went, for messages
 * @param redisTimeAtEnd the Redis clock when the attempt ended, never behind it ({@link
 *     io.delayedtask.operator.schedule.ClaimedEntry#redisClockNow()}): retries are scheduled from
 *     it, never from this host's clock
 * @param result the answer, or why it was not sent
 */
public record DeliveryOutcome(
    String uid,
    Instant due,
    Target target,
    int attempt,
    String url,
    Instant redisTimeAtEnd,
    Result result) {

  public DeliveryOutcome {
    Objects.requireNonNull(uid, "uid");
    Objects.requireNonNull(due, "due");
    Objects.requireNonNull(target, "target");
    Objects.requireNonNull(url, "url");
    Objects.requireNonNull(redisTimeAtEnd, "redisTimeAtEnd");
    Objects.requireNonNull(result, "result");
  }

  /** Whom the attempt was for. */
  public enum Target {
    SINK,
    DEAD_LETTER_SINK
  }

  /** The attempt's result. */
  public sealed interface Result {
    /** When the attempt was made (the task's firedTime for its first). */
    Instant at();

    /** The request went out (or the guard refused its address): the sender's result. */
    record Sent(DeliveryResult result) implements Result {
      @Override
      public Instant at() {
        return result.sentAt();
      }
    }

    /**
     * The request could not be made: the Service is missing, or the token could not be had. {@code
     * why} is a sentence naming the fix; {@code retryable} when waiting may fix it.
     */
    record NotSent(Instant at, String why, boolean retryable) implements Result {}
  }
}
