package io.delayedtask.operator.sink.signing;

/**
 * Where {@code sink.signing.key} finds its secrets: the Secret named by
 * DELAYEDTASK_SINK_SIGNING_SECRET in the task's namespace. Answers from memory: no request to the
 * API server per attempt.
 */
public interface SigningSecrets {
  /**
   * The secrets in {@code key} of the signing Secret in {@code namespace}.
   *
   * @param field the task's field that names the key ({@code sink.signing.key}, {@code
   *     delivery.deadLetterSink.signing.key}), for the messages
   * @throws SigningSecretException when they cannot be had (the Secret or key missing, a malformed
   *     value, not yet listed), its message naming the Secret, key and fix
   */
  SigningKeys keysFor(String namespace, String key, String field);
}
