package io.delayedtask.operator.sink.signing;

/**
 * An attempt that should be signed cannot be: the signing Secret or its key is missing, or its
 * value is not a Standard Webhooks secret. The message names the Secret, the key and the fix, never
 * the value. The attempt fails (under the retry rules: the Secret may be fixed meanwhile) and
 * nothing is sent unsigned.
 */
public final class SigningSecretException extends RuntimeException {
  public SigningSecretException(String message) {
    super(message, null, false, false);
  }
}
