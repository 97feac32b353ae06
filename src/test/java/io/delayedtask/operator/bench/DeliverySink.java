package io.delayedtask.operator.bench;

import java.time.Instant;

/** Where a system under test reports each entry it fired, at the moment it fires it. */
interface DeliverySink {

  /** The entry was claimed/delivered to its consumer now (judged by this JVM's wall clock). */
  void delivered(String id);

  /**
   * Systems that report their claim time by the Redis clock also pass it, so "early" can be checked
   * by the server clock as well.
   */
  default void claimedByServerClock(String id, Instant claimedAt) {}
}
