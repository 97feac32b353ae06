package io.delayedtask.operator.task.job;

/** The labels and annotations the operator puts on the Jobs it creates (docs/reference.md). */
public final class TaskLabels {
  public static final String TASK = "delayedtask.io/task";
  public static final String TASK_UID = "delayedtask.io/task-uid";
  public static final String DUE_TIME = "delayedtask.io/due-time";
  public static final String FIRED_TIME = "delayedtask.io/fired-time";
  public static final String PAYLOAD_PREFIX = "delayedtask.io/payload.";

  private TaskLabels() {}
}
