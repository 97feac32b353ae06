package io.delayedtask.operator.schedule;

import java.util.Objects;

/**
 * What a queue's claim may take, as the operator knows it from the DelayedTaskQueue
 * (queue-claim.lua takes it as arguments): the mode, the rate and bucket size, the concurrency.
 *
 * @param rate maxDispatchesPerSecond, or null for no rate limit
 * @param burst the bucket's size (with a rate)
 * @param concurrency maxConcurrentDispatches, or null for no limit
 */
public record QueueLimits(Mode mode, Double rate, int burst, Integer concurrency) {
  /** How a queue's claims go. */
  public enum Mode {
    /** The limits apply. */
    OPEN("open"),
    /** spec.paused: nothing is claimed. */
    PAUSED("paused"),
    /** No such DelayedTaskQueue: nothing is claimed until it is created. */
    MISSING("missing"),
    /** The DelayedTaskQueue was deleted: its tasks fire without limits. */
    RELEASED("released");

    private final String argument;

    Mode(String argument) {
      this.argument = argument;
    }

    /** How queue-claim.lua names it. */
    public String argument() {
      return argument;
    }
  }

  public static final QueueLimits MISSING = new QueueLimits(Mode.MISSING, null, 0, null);
  public static final QueueLimits RELEASED = new QueueLimits(Mode.RELEASED, null, 0, null);

  public QueueLimits {
    Objects.requireNonNull(mode, "mode");
    if (rate != null && !(rate > 0)) {
      throw new IllegalArgumentException("rate must be greater than 0, got " + rate);
    }
    if (rate != null && burst < 1) {
      throw new IllegalArgumentException("burst must be at least 1 with a rate, got " + burst);
    }
    if (concurrency != null && concurrency < 1) {
      throw new IllegalArgumentException("concurrency must be at least 1, got " + concurrency);
    }
  }

  /** Open, with these limits (null: none). */
  public static QueueLimits open(Double rate, int burst, Integer concurrency) {
    return new QueueLimits(Mode.OPEN, rate, burst, concurrency);
  }

  public static QueueLimits paused() {
    return new QueueLimits(Mode.PAUSED, null, 0, null);
  }

  /** Whether nothing is claimed until this changes (paused or missing). */
  public boolean holdsAll() {
    return mode == Mode.PAUSED || mode == Mode.MISSING;
  }
}
