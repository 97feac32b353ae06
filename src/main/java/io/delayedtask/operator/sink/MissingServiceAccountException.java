package io.delayedtask.operator.sink;

/**
 * The ServiceAccount whose tokens a namespace's tasks send does not exist there: the namespace has
 * not opted in. Permanent until someone creates it, so the task fails with this message.
 */
public final class MissingServiceAccountException extends RuntimeException {
  public MissingServiceAccountException(String serviceAccount, String namespace, String audience) {
    super(
        "ServiceAccount "
            + serviceAccount
            + " does not exist in namespace "
            + namespace
            + ": create it to let tasks there send tokens (sink.audience "
            + audience
            + ")");
  }
}
