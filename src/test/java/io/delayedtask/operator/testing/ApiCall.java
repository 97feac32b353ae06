package io.delayedtask.operator.testing;

import java.time.Instant;

/**
 * One request the mock API server answered: what was asked, with what code, and when (body kept for
 * Job creations).
 */
public record ApiCall(
    Instant at, String method, String path, int code, boolean injected, String body) {

  public boolean succeeded() {
    return code >= 200 && code < 300;
  }

  /** A Job created (not a dry run of its creation). */
  public boolean isJobCreation() {
    return method.equals("POST")
        && path.matches("/apis/batch/v1/namespaces/[^/]+/jobs(\\?.*)?")
        && !IndexedCrudDispatcher.isDryRun(path);
  }

  /**
   * A dry run of a Job's creation ({@code dryRun=All}): the check of a Job task's template when it
   * is scheduled.
   */
  public boolean isJobDryRun() {
    return method.equals("POST")
        && path.matches("/apis/batch/v1/namespaces/[^/]+/jobs(\\?.*)?")
        && IndexedCrudDispatcher.isDryRun(path);
  }

  public boolean isStatusWrite() {
    return (method.equals("PATCH") || method.equals("PUT"))
        && path.matches(
            "/apis/delayedtask\\.io/v1alpha1/namespaces/[^/]+/delayedtasks/[^/]+/status(\\?.*)?");
  }
}
