package io.delayedtask.operator.sandbox;

import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobConditionBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.JobStatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The mock API server has no kubelet, so nothing would ever run a Job. The sandbox plays one: a
 * little after a Job appears it marks it Complete (or Failed when its template sets the label
 * {@code sandbox.delayedtask.io/outcome=fail}), so the task moves on to Succeeded or Failed.
 */
final class JobCompleter implements AutoCloseable {
  static final String OUTCOME_LABEL = "sandbox.delayedtask.io/outcome";

  private final KubernetesClient client;
  private final Duration runFor;
  private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread thread = new Thread(r, "sandbox-job-completer");
    thread.setDaemon(true);
    return thread;
  });
  private final SharedIndexInformer<Job> informer;

  JobCompleter(KubernetesClient client, Duration runFor) {
    this.client = client;
    this.runFor = runFor;
    this.informer = client.batch().v1().jobs().inAnyNamespace().inform(new ResourceEventHandler<>() {
      @Override
      public void onAdd(Job job) {
        timer.schedule(() -> finish(job), runFor.toMillis(), TimeUnit.MILLISECONDS);
      }

      @Override
      public void onUpdate(Job oldJob, Job newJob) {}

      @Override
      public void onDelete(Job job, boolean deletedFinalStateUnknown) {}
    });
  }

  private void finish(Job job) {
    boolean fail = "fail".equals(job.getMetadata().getLabels() == null ? null
        : job.getMetadata().getLabels().get(OUTCOME_LABEL));
    String now = Instant.now().truncatedTo(ChronoUnit.SECONDS).toString();
    try {
      client.batch().v1().jobs().inNamespace(job.getMetadata().getNamespace())
          .withName(job.getMetadata().getName())
          .editStatus(current -> {
            current.setStatus(new JobStatusBuilder()
                .withStartTime(now)
                .withCompletionTime(fail ? null : now)
                .withSucceeded(fail ? 0 : 1)
                .withFailed(fail ? 1 : 0)
                .withConditions(new JobConditionBuilder()
                    .withType(fail ? "Failed" : "Complete")
                    .withStatus("True")
                    .withReason(fail ? "BackoffLimitExceeded" : "Completed")
                    .withMessage(fail ? "the sandbox failed this Job as its label asked" : "the sandbox ran this Job")
                    .withLastTransitionTime(now)
                    .build())
                .build());
            return current;
          });
    } catch (RuntimeException e) {
      // The task may have been deleted with its Job meanwhile; nothing to complete then.
    }
  }

  @Override
  public void close() {
    informer.close();
    timer.shutdownNow();
  }
}
