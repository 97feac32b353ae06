package io.delayedtask.operator.sandbox;

import io.delayedtask.operator.testing.JobOutcomes;
import io.delayedtask.operator.testing.KwokCluster;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Where no pod can run (the mock API server, or a real one without kube-scheduler and kwok), the
 * sandbox plays the Job controller: a little after a Job appears it writes the Job's status the way
 * a real API server accepts it ({@link JobOutcomes}): Complete, or Failed when the Job or its pod
 * template carries the label {@code sandbox.delayedtask.io/outcome: fail}, the same label that
 * makes kwok fail a pod. The task then moves on to Succeeded or Failed.
 */
final class JobCompleter implements AutoCloseable {
  private final KubernetesClient client;
  private final ScheduledExecutorService timer =
      Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread thread = new Thread(r, "sandbox-job-completer");
            thread.setDaemon(true);
            return thread;
          });
  private final SharedIndexInformer<Job> informer;

  JobCompleter(KubernetesClient client, Duration runFor) {
    this.client = client;
    this.informer =
        client
            .batch()
            .v1()
            .jobs()
            .inAnyNamespace()
            .inform(
                new ResourceEventHandler<>() {
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
    try {
      if (asksToFail(job)) {
        JobOutcomes.fail(
            client,
            job,
            "the sandbox failed this Job as its label " + KwokCluster.OUTCOME_LABEL + " asked");
      } else {
        JobOutcomes.complete(client, job);
      }
    } catch (RuntimeException e) {
      // The task may have been deleted with its Job meanwhile; nothing to complete then.
    }
  }

  static boolean asksToFail(Job job) {
    Map<String, String> jobLabels = job.getMetadata().getLabels();
    Map<String, String> podLabels =
        Optional.ofNullable(job.getSpec())
            .map(spec -> spec.getTemplate())
            .map(template -> template.getMetadata())
            .map(meta -> meta.getLabels())
            .orElse(Map.of());
    return KwokCluster.FAIL.equals(
            jobLabels == null ? null : jobLabels.get(KwokCluster.OUTCOME_LABEL))
        || KwokCluster.FAIL.equals(podLabels.get(KwokCluster.OUTCOME_LABEL));
  }

  @Override
  public void close() {
    informer.close();
    timer.shutdownNow();
  }
}
