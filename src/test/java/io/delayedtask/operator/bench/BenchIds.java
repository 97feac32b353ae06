package io.delayedtask.operator.bench;

/**
 * Entry ids carry their own due time ("t-42-1764680000123"), so a delivery can be judged without a
 * lookup table shared between producer and consumer, and the same way for every system.
 */
final class BenchIds {
  private BenchIds() {}

  static String id(String phase, long sequence, long dueEpochMillis) {
    return phase + "-" + sequence + "-" + dueEpochMillis;
  }

  static long dueEpochMillis(String id) {
    return Long.parseLong(id.substring(id.lastIndexOf('-') + 1));
  }
}
