package io.delayedtask.operator.api.v1alpha1;

/** status.phase. The names are the wire values of the contract. */
public enum Phase {
  Scheduled,
  Suspended,
  Running,
  Fired,
  Succeeded,
  Failed,
  Missed,
  Invalid;

  /** Finished phases never fire again for the same due time. */
  public boolean isFinished() {
    return this == Fired || this == Succeeded || this == Failed || this == Missed;
  }
}
