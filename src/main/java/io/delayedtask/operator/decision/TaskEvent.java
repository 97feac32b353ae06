package io.delayedtask.operator.decision;

/** A core/v1 Event on the task: Normal or Warning, its reason and its message. */
public record TaskEvent(boolean warning, String reason, String message) {
  public static TaskEvent normal(String reason, String message) {
    return new TaskEvent(false, reason, message);
  }

  public static TaskEvent warning(String reason, String message) {
    return new TaskEvent(true, reason, message);
  }
}
