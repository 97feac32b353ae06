package io.delayedtask.operator.sandbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.delayedtask.operator.testing.KwokCluster;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobBuilder;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The sandbox fails a Job by the same label on the pod template that makes kwok fail its pod. */
class JobCompleterTest {
  @Test
  void aJobFailsWhenItsPodTemplateOrItselfCarriesTheFailLabel() {
    Map<String, String> fail = Map.of(KwokCluster.OUTCOME_LABEL, KwokCluster.FAIL);

    assertThat(JobCompleter.asksToFail(job(Map.of(), fail))).isTrue();
    assertThat(JobCompleter.asksToFail(job(fail, Map.of()))).isTrue();
    assertThat(JobCompleter.asksToFail(job(Map.of(), Map.of()))).isFalse();
    assertThat(JobCompleter.asksToFail(job(Map.of(), Map.of(KwokCluster.OUTCOME_LABEL, "succeed"))))
        .isFalse();
    assertThat(
            JobCompleter.asksToFail(
                new JobBuilder().withNewMetadata().withName("bare").endMetadata().build()))
        .isFalse();
  }

  @Test
  void theControlPlaneIsChosenByNameAndABadNameSaysWhatIsAccepted() {
    assertThat(DevSandbox.ControlPlane.parse(" Mock ")).isEqualTo(DevSandbox.ControlPlane.MOCK);
    assertThat(DevSandbox.ControlPlane.parse("real")).isEqualTo(DevSandbox.ControlPlane.REAL);
    assertThatThrownBy(() -> DevSandbox.ControlPlane.parse("kind"))
        .hasMessage("sandbox.controlPlane 'kind': use auto, real or mock");
  }

  private static Job job(Map<String, String> jobLabels, Map<String, String> podLabels) {
    return new JobBuilder()
        .withNewMetadata()
        .withName("j")
        .withLabels(jobLabels)
        .endMetadata()
        .withNewSpec()
        .withNewTemplate()
        .withNewMetadata()
        .withLabels(podLabels)
        .endMetadata()
        .endTemplate()
        .endSpec()
        .build();
  }
}
