package io.delayedtask.operator.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.DelayedTaskQueue;
import io.delayedtask.operator.api.v1alpha1.DelayedTaskSpec;
import io.delayedtask.operator.sink.SinkSpecRules;
import io.delayedtask.operator.task.spec.SpecValidator;
import io.delayedtask.operator.task.spec.Validation;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.JSONSchemaProps;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneId;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The examples are what newcomers apply first: each must be a DelayedTask the API server accepts
 * (the CRD's CEL rules, checked here with the patterns taken from the committed CRD) and must say
 * exactly what its file name promises.
 */
class ExampleTasksTest {

  private static final Pattern CEL_MATCHES = Pattern.compile("self\\.matches\\(r'(.*)'\\)");

  @Test
  void thereIsOneExampleForEachFeature() {
    assertThat(ExampleTasks.files())
        .extracting(p -> p.getFileName().toString())
        .containsExactlyInAnyOrder(
            ExampleTasks.STATUS_ONLY,
            ExampleTasks.JOB_RUN_AT,
            ExampleTasks.JOB_DELAY,
            ExampleTasks.SUSPENDED,
            ExampleTasks.DEADLINE_TTL,
            ExampleTasks.TIMEZONE_RUN_AT,
            ExampleTasks.SINK_SERVICE,
            ExampleTasks.SINK_RETRY,
            ExampleTasks.SINK_RECEIVER,
            ExampleTasks.KNATIVE_BROKER,
            ExampleTasks.QUEUE_PAUSED);
  }

  @Test
  void everyExampleIsADelayedTaskWithNoFieldTheModelDoesNotKnow() {
    for (Path file : ExampleTasks.files()) {
      String name = file.getFileName().toString();
      Map<String, Object> written =
          Manifests.SERIALIZATION.unmarshal(ExampleTasks.yaml(name), Map.class);
      DelayedTask task = ExampleTasks.task(name);
      assertThat(task.getApiVersion()).as(name).isEqualTo("delayedtask.io/v1alpha1");
      assertThat(task.getMetadata().getNamespace())
          .as("%s: applies to the current namespace", name)
          .isNull();
      // A misspelled spec field would be dropped by the model; one inside the Job template kept
      // aside.
      assertThat(asJsonTree(task.getSpec())).as(name).isEqualTo(asJsonTree(written.get("spec")));
      if (task.getSpec().getJobTemplate() != null) {
        assertThat(Manifests.unknownFields(task.getSpec().getJobTemplate(), name + " jobTemplate"))
            .isEmpty();
        assertThat(
                task.getSpec()
                    .getJobTemplate()
                    .getSpec()
                    .getTemplate()
                    .getSpec()
                    .getRestartPolicy())
            .as(name)
            .isEqualTo("Never");
      }
    }
  }

  @Test
  void everyExamplePassesTheCrdValidationRules() {
    JSONSchemaProps spec =
        Manifests.one(
                Manifests.read(Path.of("crds", "delayedtasks.delayedtask.io-v1.yml")),
                CustomResourceDefinition.class)
            .getSpec()
            .getVersions()
            .get(0)
            .getSchema()
            .getOpenAPIV3Schema()
            .getProperties()
            .get("spec");
    Pattern runAt = celPattern(spec.getProperties().get("runAt"));
    Pattern delay = celPattern(spec.getProperties().get("delay"));
    for (Path file : ExampleTasks.files()) {
      String name = file.getFileName().toString();
      DelayedTaskSpec task = ExampleTasks.task(name).getSpec();
      assertThat(task.getRunAt() == null)
          .as("%s: exactly one of runAt and delay", name)
          .isNotEqualTo(task.getDelay() == null);
      if (task.getRunAt() != null) {
        assertThat(task.getRunAt()).as(name).matches(runAt);
        if (task.getTimeZone() == null) {
          assertThat(OffsetDateTime.parse(task.getRunAt())).as(name).isNotNull();
        } else {
          assertThat(LocalDateTime.parse(task.getRunAt())).as(name).isNotNull();
          assertThat(ZoneId.getAvailableZoneIds()).as(name).contains(task.getTimeZone());
        }
      } else {
        assertThat(task.getDelay()).as(name).matches(delay);
      }
      for (Long seconds :
          new Long[] {task.getStartingDeadlineSeconds(), task.getTtlSecondsAfterFinished()}) {
        if (seconds != null) {
          assertThat(seconds).as(name).isNotNegative();
        }
      }
    }
  }

  @Test
  void eachExampleShowsItsFeature() {
    DelayedTaskSpec statusOnly = ExampleTasks.task(ExampleTasks.STATUS_ONLY).getSpec();
    assertThat(statusOnly.getJobTemplate()).isNull();
    assertThat(statusOnly.getPayload()).isNotEmpty();

    DelayedTaskSpec runAt = ExampleTasks.task(ExampleTasks.JOB_RUN_AT).getSpec();
    assertThat(runAt.getRunAt()).isNotNull();
    assertThat(runAt.getJobTemplate()).isNotNull();

    DelayedTaskSpec delay = ExampleTasks.task(ExampleTasks.JOB_DELAY).getSpec();
    assertThat(delay.getDelay()).isNotNull();
    assertThat(delay.getJobTemplate()).isNotNull();

    DelayedTaskSpec suspended = ExampleTasks.task(ExampleTasks.SUSPENDED).getSpec();
    assertThat(suspended.isSuspended()).isTrue();

    DelayedTaskSpec deadline = ExampleTasks.task(ExampleTasks.DEADLINE_TTL).getSpec();
    assertThat(deadline.getStartingDeadlineSeconds()).isPositive();
    assertThat(deadline.getTtlSecondsAfterFinished()).isPositive();

    DelayedTask zoned = ExampleTasks.task(ExampleTasks.TIMEZONE_RUN_AT);
    assertThat(zoned.getSpec().getTimeZone()).isEqualTo("Europe/Berlin");
    assertThat(zoned.getSpec().getRunAt())
        .as("wall-clock time, no offset")
        .doesNotContain("Z", "+");
    zoned.getMetadata().setCreationTimestamp("2026-12-01T00:00:00Z");
    assertThat(new SpecValidator(SinkSpecRules.defaults()).validate(zoned))
        .as("07:00 CEST, as the file's comment says")
        .isEqualTo(new Validation.Valid(java.time.Instant.parse("2027-03-29T05:00:00Z")));

    // Complete on any cluster: the receiver the task's ref names is in the file, and the task is
    // valid.
    DelayedTask receiverTask = ExampleTasks.task(ExampleTasks.SINK_RECEIVER);
    assertThat(ExampleTasks.objects(ExampleTasks.SINK_RECEIVER))
        .extracting(o -> o.getKind() + "/" + o.getMetadata().getName())
        .containsExactly(
            "Deployment/event-display", "Service/event-display", "DelayedTask/hello-receiver");
    assertThat(receiverTask.getSpec().getSink().getRef().getName()).isEqualTo("event-display");
    assertThat(receiverTask.getSpec().getData()).isNotEmpty();
    io.fabric8.kubernetes.api.model.Service service =
        (io.fabric8.kubernetes.api.model.Service)
            ExampleTasks.objects(ExampleTasks.SINK_RECEIVER).get(1);
    io.fabric8.kubernetes.api.model.apps.Deployment deployment =
        (io.fabric8.kubernetes.api.model.apps.Deployment)
            ExampleTasks.objects(ExampleTasks.SINK_RECEIVER).get(0);
    assertThat(service.getSpec().getSelector())
        .isEqualTo(deployment.getSpec().getTemplate().getMetadata().getLabels());
    receiverTask.getMetadata().setCreationTimestamp("2026-12-01T00:00:00Z");
    receiverTask.getMetadata().setNamespace("shop");
    assertThat(new SpecValidator(SinkSpecRules.defaults()).validate(receiverTask))
        .isInstanceOf(Validation.Valid.class);

    // A paused queue with its limits, and a task held by it once due.
    DelayedTask queued = ExampleTasks.task(ExampleTasks.QUEUE_PAUSED);
    assertThat(ExampleTasks.objects(ExampleTasks.QUEUE_PAUSED))
        .extracting(o -> o.getKind() + "/" + o.getMetadata().getName())
        .containsExactly("DelayedTaskQueue/reminders", "DelayedTask/queued-reminder");
    DelayedTaskQueue queue =
        Manifests.SERIALIZATION.unmarshal(
            Manifests.SERIALIZATION.asYaml(ExampleTasks.objects(ExampleTasks.QUEUE_PAUSED).get(0)),
            DelayedTaskQueue.class);
    assertThat(queue.getSpec().paused()).isTrue();
    assertThat(queue.getSpec().getMaxDispatchesPerSecond()).isEqualTo(5.0);
    assertThat(queue.getSpec().getMaxConcurrentDispatches()).isEqualTo(2);
    assertThat(queued.getSpec().getQueue()).isEqualTo("reminders");
    queued.getMetadata().setCreationTimestamp("2026-12-01T00:00:00Z");
    queued.getMetadata().setNamespace("shop");
    assertThat(new SpecValidator(SinkSpecRules.defaults()).validate(queued))
        .isInstanceOf(Validation.Valid.class);

    // Routed through a Knative Broker, with ceOverrides a Trigger filters on; says it needs Knative
    // Eventing.
    DelayedTask broker = ExampleTasks.task(ExampleTasks.KNATIVE_BROKER);
    assertThat(ExampleTasks.objects(ExampleTasks.KNATIVE_BROKER))
        .as("applies without Knative")
        .hasSize(1);
    assertThat(broker.getSpec().getSink().getRef().getApiVersion())
        .isEqualTo("eventing.knative.dev/v1");
    assertThat(broker.getSpec().getSink().getRef().getKind()).isEqualTo("Broker");
    assertThat(broker.getSpec().getCeOverrides().getExtensions()).containsEntry("team", "orders");
    assertThat(ExampleTasks.yaml(ExampleTasks.KNATIVE_BROKER)).contains("NEEDS KNATIVE EVENTING");
    broker.getMetadata().setCreationTimestamp("2026-12-01T00:00:00Z");
    broker.getMetadata().setNamespace("shop");
    assertThat(new SpecValidator(SinkSpecRules.defaults()).validate(broker))
        .isInstanceOf(Validation.Valid.class);
  }

  /** Through JSON text, so that 60 read as an Integer equals 60 written from a Long. */
  private static Map<String, Object> asJsonTree(Object value) {
    return Manifests.SERIALIZATION.unmarshal(Manifests.SERIALIZATION.asJson(value), Map.class);
  }

  private static Pattern celPattern(JSONSchemaProps field) {
    String rule = field.getXKubernetesValidations().get(0).getRule();
    Matcher matcher = CEL_MATCHES.matcher(rule);
    assertThat(matcher.matches()).as("CEL rule %s", rule).isTrue();
    return Pattern.compile(matcher.group(1));
  }
}
