package io.delayedtask.operator.task.job;

import io.fabric8.kubernetes.api.model.StatusCause;
import io.fabric8.kubernetes.client.KubernetesClientException;

/** Which API server answers are worth retrying (docs/reference.md: 409, 429, 5xx, timeouts). */
public final class ApiErrors {
  private ApiErrors() {}

  public static boolean isTransient(Throwable error) {
    if (!(error instanceof KubernetesClientException e)) {
      return true;
    }
    int code = e.getCode();
    // No HTTP answer at all (connection refused, a timeout): fabric8 says -1 (its exceptions
    // without a code), 0 in some paths.
    return code <= 0 || code == 408 || code == 409 || code == 429 || code >= 500;
  }

  /** The API server's own explanation, for status.message. */
  public static String reason(Throwable error) {
    if (error instanceof KubernetesClientException e
        && e.getStatus() != null
        && e.getStatus().getMessage() != null) {
      return e.getStatus().getMessage();
    }
    return error.getMessage();
  }

  /**
   * The API server's explanation of a refused Job whose spec came from spec.jobTemplate, with each
   * field it names made the task's own ({@code spec.template.spec.restartPolicy} becomes {@code
   * spec.jobTemplate.spec.template.spec.restartPolicy}), so the message names what to fix.
   */
  public static String jobTemplateReason(Throwable error) {
    String reason = reason(error);
    if (reason == null
        || !(error instanceof KubernetesClientException e)
        || e.getStatus() == null
        || e.getStatus().getDetails() == null
        || e.getStatus().getDetails().getCauses() == null) {
      return reason;
    }
    java.util.Set<String> fields =
        new java.util.TreeSet<>(
            java.util.Comparator.comparingInt(String::length)
                .reversed()
                .thenComparing(java.util.Comparator.naturalOrder()));
    for (StatusCause cause : e.getStatus().getDetails().getCauses()) {
      String field = cause.getField();
      if (field != null
          && (field.startsWith("spec.")
              || field.startsWith("metadata.labels")
              || field.startsWith("metadata.annotations"))) {
        fields.add(field);
      }
    }
    String result = reason;
    for (String field :
        fields) { // longest first: a field that prefixes another is not rewritten twice
      result =
          result.replaceAll(
              "(?<![\\w.])" + java.util.regex.Pattern.quote(field) + "(?=[:\\s,]|$)",
              java.util.regex.Matcher.quoteReplacement("spec.jobTemplate." + field));
    }
    return result;
  }
}
