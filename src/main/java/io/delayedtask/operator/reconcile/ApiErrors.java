package io.delayedtask.operator.reconcile;

import io.fabric8.kubernetes.client.KubernetesClientException;

/** Which API server answers are worth retrying (docs/reference.md: 409, 429, 5xx, timeouts). */
final class ApiErrors {
  private ApiErrors() {}

  static boolean isTransient(Throwable error) {
    if (!(error instanceof KubernetesClientException e)) {
      return true;
    }
    int code = e.getCode();
    // No HTTP answer at all (connection refused, a timeout): fabric8 says -1 (its exceptions
    // without a code), 0 in some paths.
    return code <= 0 || code == 408 || code == 409 || code == 429 || code >= 500;
  }

  /** The API server's own explanation, for status.message. */
  static String reason(Throwable error) {
    if (error instanceof KubernetesClientException e && e.getStatus() != null && e.getStatus().getMessage() != null) {
      return e.getStatus().getMessage();
    }
    return error.getMessage();
  }
}
