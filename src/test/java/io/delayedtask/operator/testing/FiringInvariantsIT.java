package io.delayedtask.operator.testing;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.DelayedTaskStatus;
import io.delayedtask.operator.api.v1alpha1.Phase;
import io.delayedtask.operator.task.job.JobFactory;
import io.delayedtask.operator.task.time.Times;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The "fired once, not early" check itself, on the real API server with no operator: the test plays
 * the operator's part by hand. A Job deleted and created again under its deterministic name (what
 * an operator that fires twice would leave) must fail the check, though only one Job is there at
 * the end; one Job created once must pass it.
 */
@RequiresRealKubernetes
class FiringInvariantsIT {
  private final RealKubernetes kube = RealKubernetes.shared();
  private final KubernetesClient client = kube.client();
  private final String namespace = kube.createNamespace("invariants");

  @Test
  void aJobCreatedTwiceUnderOneNameIsCaughtThoughOnlyOneIsLeft() {
    try (FiringLedger ledger = new FiringLedger(client, namespace)) {
      Job job = fireByHand("twice");
      client.resource(job).delete();
      await()
          .until(
              () ->
                  client
                          .batch()
                          .v1()
                          .jobs()
                          .inNamespace(namespace)
                          .withName(job.getMetadata().getName())
                          .get()
                      == null);
      DelayedTask task = Tasks.get(client, namespace, "twice");
      client
          .resource(
              JobFactory.jobFor(
                  task,
                  Instant.parse(task.getStatus().getDueTime()),
                  Instant.parse(task.getStatus().getFiredTime())))
          .create();

      assertThatThrownBy(
              () ->
                  FiringInvariants.assertFiredOnceNotEarly(
                      client, namespace, List.of("twice"), ledger, null))
          .hasMessageContaining("twice: the test saw 2 Jobs appear for it");
    }
  }

  @Test
  void oneJobCreatedOncePasses() {
    try (FiringLedger ledger = new FiringLedger(client, namespace)) {
      fireByHand("once");

      assertThatCode(
              () ->
                  FiringInvariants.assertFiredOnceNotEarly(
                      client, namespace, List.of("once"), ledger, null))
          .doesNotThrowAnyException();
    }
  }

  /**
   * A Job task that fell due a second ago, its Job, and the Running status the operator would
   * write.
   */
  private Job fireByHand(String name) {
    Instant due = Instant.now().minusSeconds(1).truncatedTo(ChronoUnit.MILLIS);
    DelayedTask task = Tasks.create(client, Tasks.withJob(namespace, name, due));
    Instant fired = Instant.now();
    Job job = client.resource(JobFactory.jobFor(task, due, fired)).create();
    DelayedTaskStatus status = new DelayedTaskStatus();
    status.setPhase(Phase.Running);
    status.setDueTime(Times.format(due));
    status.setFiredTime(Times.format(fired));
    status.setJobName(job.getMetadata().getName());
    status.setObservedGeneration(task.getMetadata().getGeneration());
    task.setStatus(status);
    client.resource(task).updateStatus();
    return job;
  }
}
