package io.delayedtask.operator.reconcile;

import static io.delayedtask.operator.testing.Tasks.create;
import static io.delayedtask.operator.testing.Tasks.get;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.testing.RealKubernetes;
import io.delayedtask.operator.testing.RequiresRealKubernetes;
import io.delayedtask.operator.testing.Tasks;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * An old TTL decision deletes neither a task re-created under its name nor one changed since (issue
 * 16, item 8).
 */
@RequiresRealKubernetes
class TtlDeletionIT {
  private final RealKubernetes kube = RealKubernetes.shared();
  private final KubernetesClient client = kube.client();
  private final String namespace = kube.createNamespace("ttl-deletion");

  @Test
  void aTaskReCreatedUnderTheSameNameIsNotDeletedByTheOldDecision() {
    DelayedTask decidedOn =
        create(client, Tasks.statusOnly(namespace, "recreated", Instant.now().plusSeconds(3600)));
    client.resource(decidedOn).delete();
    await()
        .until(
            () ->
                client
                        .resources(DelayedTask.class)
                        .inNamespace(namespace)
                        .withName("recreated")
                        .get()
                    == null);
    DelayedTask recreated =
        create(client, Tasks.statusOnly(namespace, "recreated", Instant.now().plusSeconds(3600)));

    assertThat(TtlDeletion.delete(client, decidedOn)).isEqualTo(TtlDeletion.Result.CHANGED);

    assertThat(get(client, namespace, "recreated").getMetadata().getUid())
        .isEqualTo(recreated.getMetadata().getUid());
  }

  @Test
  void aTaskChangedSinceTheDecisionIsNotDeletedAndTheUnchangedOneIs() {
    DelayedTask decidedOn =
        create(client, Tasks.statusOnly(namespace, "changed", Instant.now().plusSeconds(3600)));
    client
        .resources(DelayedTask.class)
        .inNamespace(namespace)
        .withName("changed")
        .edit(
            task -> {
              task.getMetadata().setLabels(Map.of("edited", "yes"));
              return task;
            });

    assertThat(TtlDeletion.delete(client, decidedOn)).isEqualTo(TtlDeletion.Result.CHANGED);
    assertThat(get(client, namespace, "changed")).isNotNull();

    assertThat(TtlDeletion.delete(client, get(client, namespace, "changed")))
        .isEqualTo(TtlDeletion.Result.DELETED);
    assertThat(client.resources(DelayedTask.class).inNamespace(namespace).withName("changed").get())
        .isNull();
  }
}
