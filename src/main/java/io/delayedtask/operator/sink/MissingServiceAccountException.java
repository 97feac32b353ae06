package io.delayedtask.operator.sink;

/** The namespace has no sender ServiceAccount: it has not opted in to tokens. The message says what to create. */
public final class MissingServiceAccountException extends RuntimeException {
  public MissingServiceAccountException(String message) {
    super(message);
  }
}
