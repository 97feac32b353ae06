package io.delayedtask.operator.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.DelayedTaskStatus;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The fault harness itself: injected API faults answer first and then run out; the ledger sees
 * effects.
 */
class MockApiServerIT {
  private static final String NS = "harness";
  private MockApiServer api;

  @BeforeEach
  void start() {
    api = MockApiServer.start();
  }

  @AfterEach
  void stop() {
    api.close();
  }

  @Test
  void injectedFaultsAnswerFirstThenTheCrudStoreResumes() {
    ApiFault fault =
        api.inject(ApiFault.of("POST", "/apis/batch/v1/namespaces/[^/]+/jobs", 409, 2));
    Job job =
        new JobBuilder()
            .withNewMetadata()
            .withName("j")
            .withNamespace(NS)
            .endMetadata()
            .withNewSpec()
            .withNewTemplate()
            .withNewSpec()
            .addNewContainer()
            .withName("c")
            .withImage("x")
            .endContainer()
            .endSpec()
            .endTemplate()
            .endSpec()
            .build();

    assertThatThrownBy(() -> api.client().resource(job).create())
        .isInstanceOfSatisfying(
            KubernetesClientException.class, e -> assertThat(e.getCode()).isEqualTo(409));
    assertThatThrownBy(() -> api.client().resource(job).create())
        .isInstanceOfSatisfying(
            KubernetesClientException.class, e -> assertThat(e.getCode()).isEqualTo(409));
    api.client().resource(job).create();

    assertThat(fault.hits()).isEqualTo(2);
    assertThat(fault.usedUp()).isTrue();
    assertThat(api.calls(ApiCall::isJobCreation))
        .extracting(ApiCall::code)
        .containsExactly(409, 409, 201);
    assertThat(api.client().batch().v1().jobs().inNamespace(NS).withName("j").get()).isNotNull();
  }

  @Test
  void aPlantedForeignObjectMakesTheFirstCreationMeetAlreadyExists() {
    api.plantBeforeFirstCreation("\"mine\"", body -> body.replace("\"mine\"", "\"theirs\""));
    Job job =
        new JobBuilder()
            .withNewMetadata()
            .withName("j")
            .withNamespace(NS)
            .addToLabels("owner", "mine")
            .endMetadata()
            .withNewSpec()
            .withNewTemplate()
            .withNewSpec()
            .addNewContainer()
            .withName("c")
            .withImage("x")
            .endContainer()
            .endSpec()
            .endTemplate()
            .endSpec()
            .build();

    // The operator tells "someone made it first" from other conflicts by the reason, as with a real
    // API server.
    assertThatThrownBy(() -> api.client().resource(job).create())
        .isInstanceOfSatisfying(
            KubernetesClientException.class,
            e -> {
              assertThat(e.getCode()).isEqualTo(409);
              assertThat(e.getStatus().getReason()).isEqualTo("AlreadyExists");
            });
    assertThat(
            api.client()
                .batch()
                .v1()
                .jobs()
                .inNamespace(NS)
                .withName("j")
                .get()
                .getMetadata()
                .getLabels())
        .containsEntry("owner", "theirs");
  }

  @Test
  void aStatusWriteWithAStaleResourceVersionIsAConflict() {
    // The operator's status writes rely on optimistic locking, as on a real API server.
    DelayedTask created =
        api.client()
            .resource(Tasks.statusOnly(NS, "rv", Instant.parse("2026-01-01T00:00:00Z")))
            .create();
    DelayedTask first = Serialization.clone(created);
    first.setStatus(new DelayedTaskStatus());
    first.getStatus().setFiredTime("2026-01-01T00:00:00.001Z");
    api.client().resource(first).updateStatus();

    DelayedTask stale = Serialization.clone(created);
    stale.setStatus(new DelayedTaskStatus());
    stale.getStatus().setDueTime("2026-01-01T00:00:00.000Z");
    assertThatThrownBy(() -> api.client().resource(stale).updateStatus())
        .isInstanceOfSatisfying(
            KubernetesClientException.class, e -> assertThat(e.getCode()).isEqualTo(409));
    assertThat(api.client().resource(created).get().getStatus().getFiredTime())
        .isEqualTo("2026-01-01T00:00:00.001Z");
  }

  @Test
  void serverErrorsAreRetriedByTheFabric8ClientItself() {
    // Worth knowing for every 5xx test: the client retries them with backoff before a caller sees
    // one.
    ApiFault fault =
        api.inject(ApiFault.of("POST", "/apis/batch/v1/namespaces/[^/]+/jobs", 500, 2));
    Job job =
        new JobBuilder()
            .withNewMetadata()
            .withName("k")
            .withNamespace(NS)
            .endMetadata()
            .withNewSpec()
            .withNewTemplate()
            .withNewSpec()
            .addNewContainer()
            .withName("c")
            .withImage("x")
            .endContainer()
            .endSpec()
            .endTemplate()
            .endSpec()
            .build();

    api.client().resource(job).create();

    assertThat(fault.hits()).isEqualTo(2);
    assertThat(api.calls(ApiCall::isJobCreation))
        .extracting(ApiCall::code)
        .containsExactly(500, 500, 201);
  }

  @Test
  void delayedTasksHaveAStatusSubresourceAndTheLedgerSeesFiredTimes() {
    try (FiringLedger ledger = new FiringLedger(api.client(), NS)) {
      DelayedTask task =
          api.client()
              .resource(Tasks.statusOnly(NS, "t", Instant.parse("2026-01-01T00:00:00Z")))
              .create();
      assertThat(task.getMetadata().getUid()).isNotBlank();

      DelayedTaskStatus status = new DelayedTaskStatus();
      status.setDueTime("2026-01-01T00:00:00.000Z");
      status.setFiredTime("2026-01-01T00:00:00.010Z");
      task.setStatus(status);
      api.client().resource(task).updateStatus();

      await()
          .atMost(Duration.ofSeconds(10))
          .untilAsserted(
              () ->
                  assertThat(ledger.firedTimesByTaskUid().get(task.getMetadata().getUid()))
                      .containsExactly("2026-01-01T00:00:00.010Z"));
      assertThat(api.calls(ApiCall::isStatusWrite)).hasSize(1);
    }
  }
}
