package io.delayedtask.operator.reconcile;

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
    KubernetesClientException timeout = new KubernetesClientException("An error has occurred.", new TimeoutException());
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

  private static KubernetesClientException answer(int code) {
    return new KubernetesClientException(new StatusBuilder().withCode(code).withMessage("answer " + code).build());
  }
}
