package io.delayedtask.operator.testing;

import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobCondition;
import io.fabric8.kubernetes.api.model.batch.v1.JobConditionBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.JobStatus;
import io.fabric8.kubernetes.api.model.batch.v1.JobStatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;

/**
 * Plays the Job controller where none runs: writes a Job's terminal status through {@code /status}
 * in the form the API server's release accepts. 1.37 validates it: a finished Job needs a
 * startTime; {@code Complete} needs {@code SuccessCriteriaMet} first, a completionTime and enough
 * succeeded pods; {@code Failed} needs {@code FailureTarget} first. 1.30 refuses {@code
 * SuccessCriteriaMet} on a Job without a successPolicy ("cannot set SuccessCriteriaMet=True for Job
 * without SuccessPolicy"), so there {@code Complete} comes alone.
 */
public final class JobOutcomes {
  /** What 1.30 answers to SuccessCriteriaMet on a Job without a successPolicy. */
  private static final String REFUSED_ON_1_30 =
      "cannot set SuccessCriteriaMet=True for Job without SuccessPolicy";

  private JobOutcomes() {}

  public static Job complete(KubernetesClient client, Job job) {
    String now = now();
    String reason = "CompletionsReached";
    String message = "Reached expected number of succeeded pods";
    try {
      return write(
          client,
          job,
          completed(
              job,
              now,
              condition("SuccessCriteriaMet", reason, message, now),
              condition("Complete", reason, message, now)));
    } catch (KubernetesClientException refused) {
      // 1.30 (OldestKubernetesIT): written again without it. Rather than asking /version before
      // every completion, which would add a request on every other server, the mock's included.
      if (refused.getCode() != 422
          || !String.valueOf(refused.getMessage()).contains(REFUSED_ON_1_30)) {
        throw refused;
      }
      return write(client, job, completed(job, now, condition("Complete", reason, message, now)));
    }
  }

  private static JobStatus completed(Job job, String now, JobCondition... conditions) {
    return new JobStatusBuilder()
        .withStartTime(startTime(job, now))
        .withCompletionTime(now)
        .withSucceeded(1)
        .withReady(0)
        .withConditions(conditions)
        .build();
  }

  public static Job fail(KubernetesClient client, Job job, String message) {
    String now = now();
    return write(
        client,
        job,
        new JobStatusBuilder()
            .withStartTime(startTime(job, now))
            .withFailed(1)
            .withReady(0)
            .withConditions(
                condition("FailureTarget", "BackoffLimitExceeded", message, now),
                condition("Failed", "BackoffLimitExceeded", message, now))
            .build());
  }

  private static Job write(KubernetesClient client, Job job, JobStatus status) {
    Job fresh =
        client
            .batch()
            .v1()
            .jobs()
            .inNamespace(job.getMetadata().getNamespace())
            .withName(job.getMetadata().getName())
            .get();
    fresh.setStatus(status);
    return client
        .batch()
        .v1()
        .jobs()
        .inNamespace(fresh.getMetadata().getNamespace())
        .resource(fresh)
        .updateStatus();
  }

  private static String startTime(Job job, String now) {
    return job.getStatus() != null && job.getStatus().getStartTime() != null
        ? job.getStatus().getStartTime()
        : now;
  }

  private static JobCondition condition(String type, String reason, String message, String now) {
    return new JobConditionBuilder()
        .withType(type)
        .withStatus("True")
        .withReason(reason)
        .withMessage(message)
        .withLastProbeTime(now)
        .withLastTransitionTime(now)
        .build();
  }

  private static String now() {
    return Instant.now().truncatedTo(ChronoUnit.SECONDS).toString();
  }

  /** The Job's terminal condition types, for assertions. */
  public static List<String> trueConditions(Job job) {
    return job.getStatus() == null || job.getStatus().getConditions() == null
        ? List.of()
        : job.getStatus().getConditions().stream()
            .filter(c -> "True".equals(c.getStatus()))
            .map(JobCondition::getType)
            .toList();
  }
}
