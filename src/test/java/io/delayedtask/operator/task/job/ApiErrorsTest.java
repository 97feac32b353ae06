package io.delayedtask.operator.task.job;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

class ApiErrorsTest {

  @Test
  void noAnswerIsTransientAsFabric8ReportsIt() {
    // What the client throws when a request timed out (after its own retries): a message, the
    // cause, and no HTTP code.
    KubernetesClientException timeout =
        new KubernetesClientException("An error has occurred.", new TimeoutException());
    assertThat(ApiErrors.isTransient(timeout)).isTrue();
  }

  @Test
  void answersAreTransientOrNotByTheirCode() {
    for (int code : new int[] {408, 409, 429, 500, 503, 504}) {
      assertThat(ApiErrors.isTransient(answer(code))).as("%d", code).isTrue();
    }
    for (int code : new int[] {400, 403, 404, 422}) {
      assertThat(ApiErrors.isTransient(answer(code))).as("%d", code).isFalse();
    }
  }

  /**
   * The fields of a refused Job are named as the task's own, each once, and nothing else is
   * touched.
   */
  @Test
  void aRefusedJobTemplateNamesTheTasksFields() {
    String message =
        "Job.batch \"t-1a2b3c4d\" is invalid: [spec.template.spec.restartPolicy: Required value: valid "
            + "values: \"OnFailure\", \"Never\", spec.template.spec.containers[0].name: Invalid value: \"Bad_Name\": a "
            + "lowercase RFC 1123 label, spec.template: Invalid value]";
    KubernetesClientException refused =
        new KubernetesClientException(
            new StatusBuilder()
                .withCode(422)
                .withMessage(message)
                .withNewDetails()
                .addNewCause()
                .withField("spec.template.spec.restartPolicy")
                .endCause()
                .addNewCause()
                .withField("spec.template.spec.containers[0].name")
                .endCause()
                .addNewCause()
                .withField("spec.template")
                .endCause()
                .addNewCause()
                .withField("metadata.name")
                .endCause()
                .endDetails()
                .build());

    assertThat(ApiErrors.jobTemplateReason(refused))
        .isEqualTo(
            "Job.batch \"t-1a2b3c4d\" is invalid: ["
                + "spec.jobTemplate.spec.template.spec.restartPolicy: Required value: valid values: \"OnFailure\", \"Never\", "
                + "spec.jobTemplate.spec.template.spec.containers[0].name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 "
                + "label, spec.jobTemplate.spec.template: Invalid value]");
    assertThat(ApiErrors.jobTemplateReason(answer(403))).isEqualTo("answer 403");
  }

  private static KubernetesClientException answer(int code) {
    return new KubernetesClientException(
        new StatusBuilder().withCode(code).withMessage("answer " + code).build());
  }
}
