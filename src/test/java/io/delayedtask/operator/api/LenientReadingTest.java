package io.delayedtask.operator.api;

import static org.assertj.core.api.Assertions.assertThat;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.DelayedTaskSpec;
import io.delayedtask.operator.api.v1alpha1.Phase;
import io.delayedtask.operator.reconcile.TaskCloner;
import io.delayedtask.operator.sink.SinkSpecRules;
import io.delayedtask.operator.task.spec.SpecValidator;
import io.delayedtask.operator.task.spec.Validation;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.fabric8.kubernetes.client.utils.Serialization;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A DelayedTask is always readable: fabric8's informer stops for good on one object it cannot
 * deserialize (and JOSDK with it), so unknown fields are ignored and wrong-typed ones are named.
 */
class LenientReadingTest {
  private static final String HEAD =
      """
      {"apiVersion":"delayedtask.io/v1alpha1","kind":"DelayedTask",
       "metadata":{"name":"t","namespace":"ns","creationTimestamp":"2026-12-01T10:00:00Z"},"somethingTopLevel":1,""";

  private static DelayedTask read(String rest) {
    return Serialization.unmarshal(HEAD + rest, DelayedTask.class);
  }

  @Test
  void fieldsOfANewerCrdAreIgnoredAndTheKnownOnesRead() {
    DelayedTask task =
        read(
            """
        "spec":{"delay":"10m","timeZone":"Europe/Berlin","somethingNew":{"a":1},"suspend":true},
        "status":{"phase":"Scheduled","newerField":"x","conditions":[{"type":"Ready","status":"True","extra":1}]}}""");
    assertThat(task.getSpec().getDelay()).isEqualTo("10m");
    assertThat(task.getSpec().isSuspended()).isTrue();
    assertThat(task.getSpec().unreadableFields()).isEmpty();
    assertThat(task.getStatus().getPhase()).isEqualTo(Phase.Scheduled);
    assertThat(task.getStatus().getConditions())
        .singleElement()
        .satisfies(c -> assertThat(c.getType()).isEqualTo("Ready"));
    assertThat(new SpecValidator(SinkSpecRules.defaults()).validate(task))
        .isInstanceOf(Validation.Valid.class);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
      "suspend":"yes-please"                        | spec.suspend must be true or false, not "yes-please"
      "payload":5                                   | spec.payload must be a map of string values, not 5
      "startingDeadlineSeconds":"soon"              | spec.startingDeadlineSeconds must be a whole number, not "soon"
      "ttlSecondsAfterFinished":[1]                 | spec.ttlSecondsAfterFinished must be a whole number, not [1]
      "jobTemplate":{"spec":{"backoffLimit":"x"}}   | spec.jobTemplate.spec.backoffLimit has the wrong type
      """)
  void aWrongTypedFieldMakesTheTaskInvalidNamingTheField(String field, String expected) {
    DelayedTask task = read("\"spec\":{\"delay\":\"10m\"," + field + "}}");
    assertThat(task.getSpec().getDelay()).isEqualTo("10m");
    assertThat(task.getSpec().unreadableFields()).singleElement().asString().startsWith(expected);
    assertThat(new SpecValidator(SinkSpecRules.defaults()).validate(task))
        .isInstanceOfSatisfying(
            Validation.Invalid.class,
            invalid -> assertThat(invalid.message()).contains(expected).contains("fix the field"));
  }

  @Test
  void aSpecThatIsNotAnObjectIsInvalid() {
    DelayedTask task = read("\"spec\":5}");
    assertThat(new SpecValidator(SinkSpecRules.defaults()).validate(task))
        .isInstanceOfSatisfying(
            Validation.Invalid.class,
            invalid -> assertThat(invalid.message()).contains("spec must be an object, not 5"));
  }

  @Test
  void anUnreadableStatusFieldIsDroppedAndTheRestKept() {
    DelayedTask task =
        read(
            """
        "spec":{"delay":"10m"},"status":{"phase":"FromTheFuture","dueTime":"2026-12-01T10:10:00.000Z"}}""");
    assertThat(task.getStatus().getPhase()).isNull();
    assertThat(task.getStatus().getDueTime()).isEqualTo("2026-12-01T10:10:00.000Z");
    assertThat(task.getStatus().unreadableFields())
        .singleElement()
        .asString()
        .startsWith("status.phase must be one of Scheduled, Suspended");
  }

  @Test
  void writingItBackLeavesOutWhatWasUnreadable() {
    DelayedTask task = read("\"spec\":{\"delay\":\"10m\",\"suspend\":\"yes-please\"}}");
    assertThat(Serialization.asJson(task.getSpec())).isEqualTo("{\"delay\":\"10m\"}");
  }

  @Test
  void theCopyJosdkReconcilesStaysInvalid() {
    DelayedTask task = read("\"spec\":{\"delay\":\"10m\",\"suspend\":\"yes-please\"}}");
    DelayedTask copy = new TaskCloner(new KubernetesSerialization()).clone(task);
    assertThat(copy).isNotSameAs(task);
    assertThat(copy.getSpec().unreadableFields())
        .containsExactlyElementsOf(task.getSpec().unreadableFields());
    assertThat(new SpecValidator(SinkSpecRules.defaults()).validate(copy))
        .isInstanceOf(Validation.Invalid.class);
  }

  /** A jobTemplate as JSON of exactly {@code bytes} bytes (one env value sized to fit). */
  private static String jobTemplateOf(int bytes) {
    String head =
        "{\"spec\":{\"template\":{\"spec\":{\"restartPolicy\":\"Never\",\"containers\":[{\"name\":\"c\","
            + "\"image\":\"busybox\",\"env\":[{\"name\":\"BIG\",\"value\":\"";
    String tail = "\"}]}]}}}}";
    return head + "x".repeat(bytes - head.length() - tail.length()) + tail;
  }

  @Test
  void aJobTemplateUpToTheLimitIsKept() {
    DelayedTask task =
        read(
            "\"spec\":{\"delay\":\"10m\",\"jobTemplate\":"
                + jobTemplateOf(DelayedTaskSpec.JOB_TEMPLATE_MAX_BYTES)
                + "}}");
    assertThat(task.getSpec().unreadableFields()).isEmpty();
    assertThat(task.getSpec().getJobTemplate()).isNotNull();
    assertThat(new SpecValidator(SinkSpecRules.defaults()).validate(task))
        .isInstanceOf(Validation.Valid.class);
  }

  /**
   * Not kept in memory at all (the informer holds every task), and the task is Invalid, saying why.
   */
  @Test
  void aJobTemplateAboveTheLimitIsNotKeptAndTheTaskIsInvalid() {
    DelayedTask task =
        read(
            "\"spec\":{\"delay\":\"10m\",\"jobTemplate\":"
                + jobTemplateOf(DelayedTaskSpec.JOB_TEMPLATE_MAX_BYTES + 1)
                + "}}");
    assertThat(task.getSpec().getJobTemplate()).isNull();
    assertThat(new SpecValidator(SinkSpecRules.defaults()).validate(task))
        .isInstanceOfSatisfying(
            Validation.Invalid.class,
            invalid ->
                assertThat(invalid.message())
                    .contains(
                        "spec.jobTemplate is 131073 bytes as JSON, more than the "
                            + "131072 allowed; move large scripts or data into a ConfigMap"));
  }
}
