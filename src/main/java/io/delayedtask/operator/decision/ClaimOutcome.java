package io.delayedtask.operator.decision;

/**
 * What became of a claimed entry, as /metrics counts it: the final ones settle a due time ({@code
 * delayedtask_due_times_total}), the others are skips ({@code delayedtask_fire_skipped_total}).
 */
public enum ClaimOutcome {
  /** Fired, status only (phase Fired). */
  FIRED(true),
  /** Fired: its Job was created (or found, created by an earlier attempt). */
  JOB_CREATED(true),
  /** Too late for startingDeadlineSeconds: nothing fired, phase Missed. */
  MISSED(true),
  /** Cannot fire for a reason retrying will not fix: phase Failed. */
  FAILED(true),
  /** The entry no longer stands for a due task (gone, re-created, moved, invalid): dropped. */
  STALE(false),
  /** A transient error: handed back to be tried again with backoff. */
  RETRY(false),
  /** Redis's clock says due, this operator's not yet: handed back until both agree. */
  CLOCK_SKEW(false),
  /**
   * A task with a jobTemplate or a sink.audience was due while the admission policy was missing:
   * handed back.
   */
  ADMISSION_POLICY_MISSING(false);

  private final boolean settles;

  ClaimOutcome(boolean settles) {
    this.settles = settles;
  }

  /** True for the outcomes that settle a due time (counted as {@link #FIRED}); false for skips. */
  public boolean isFinal() {
    return settles;
  }
}
