package io.delayedtask.operator.schedule;

/** Redis could not be reached or answered with an error; the operation did not happen. */
public class ScheduleUnavailableException extends RuntimeException {
  public ScheduleUnavailableException(String message, Throwable cause) {
    super(message, cause);
  }
}
