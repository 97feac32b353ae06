package io.delayedtask.operator.bench;

import io.delayedtask.operator.bench.FireRecorder.LagSummary;
import io.delayedtask.operator.bench.RedisProbe.CommandLog;

/** Everything measured for one system: the steady-load phase and the same-instant drain. */
record SystemResult(String system, Steady steady, Drain drain) {

  /**
   * Steady load: lag figures, and Redis commands per fired task, both as counted by {@code INFO
   * commandstats} (which includes commands run inside scripts) and as sent by clients.
   */
  record Steady(
      LagSummary lag,
      double commandsPerTask,
      double clientCommandsPerTask,
      CommandLog log,
      Hiccups hiccups) {}

  /** How late a thread asking for a 1 ms sleep woke during the phase (machine noise), in ms. */
  record Hiccups(double p99Millis, double maxMillis) {}

  /**
   * Same-instant drain: {@code drainMillis} from the due instant to the last delivery (NaN when not
   * everything arrived before the time-out), the load time, and the longest client command.
   */
  record Drain(
      int entries,
      LagSummary lag,
      double drainMillis,
      long loadMillis,
      boolean loadOverran,
      double commandsPerTask,
      double clientCommandsPerTask,
      CommandLog log) {

    boolean complete() {
      return !Double.isNaN(drainMillis);
    }
  }
}
