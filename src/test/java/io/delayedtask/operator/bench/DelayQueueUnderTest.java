package io.delayedtask.operator.bench;

/**
 * One delay-queue implementation the benchmark drives: it accepts entries (an id and an absolute
 * due time) and, once started, hands every entry it fires to a {@link DeliverySink}.
 */
interface DelayQueueUnderTest extends AutoCloseable {

  /** The row label in the report. */
  String name();

  /** Starts the poller/consumer; from now on fired entries go to {@code sink}, from any thread. */
  void start(DeliverySink sink);

  /**
   * Schedules {@code id} to fire at {@code dueEpochMillis}; callable from several threads at once.
   */
  void schedule(String id, long dueEpochMillis);

  /** Stops the poller and releases every connection and thread. */
  @Override
  void close();
}
