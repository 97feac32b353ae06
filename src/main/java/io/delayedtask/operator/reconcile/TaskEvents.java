package io.delayedtask.operator.reconcile;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.ObjectReferenceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Clock;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Records core/v1 Events on a DelayedTask, one per transition. Failing to record one is never fatal. */
public class TaskEvents {
  public static final String SCHEDULED = "Scheduled";
  public static final String SUSPENDED = "Suspended";
  public static final String FIRED = "Fired";
  public static final String JOB_CREATED = "JobCreated";
  public static final String SUCCEEDED = "Succeeded";
  public static final String MISSED = "Missed";
  public static final String INVALID = "Invalid";
  public static final String FAILED = "Failed";
  /** A finished task's TTL passed, and it was kept because a GitOps tool manages it. */
  public static final String TTL_SKIPPED = "TTLSkipped";
  private static final String COMPONENT = "delayed-task-operator";
  private static final Logger LOG = LoggerFactory.getLogger(TaskEvents.class);

  private final KubernetesClient client;
  private final Clock clock;

  public TaskEvents(KubernetesClient client, Clock clock) {
    this.client = client;
    this.clock = clock;
  }

  public void normal(DelayedTask task, String reason, String message) {
    record(task, "Normal", reason, message);
  }

  public void warning(DelayedTask task, String reason, String message) {
    record(task, "Warning", reason, message);
  }

  private void record(DelayedTask task, String type, String reason, String message) {
    String now = Times.format(clock.instant());
    String namespace = task.getMetadata().getNamespace();
    try {
      client.v1().events().inNamespace(namespace).resource(new EventBuilder()
          .withNewMetadata()
            .withName(task.getMetadata().getName() + "." + UUID.randomUUID().toString().substring(0, 13).replace("-", ""))
            .withNamespace(namespace)
          .endMetadata()
          .withInvolvedObject(new ObjectReferenceBuilder()
              .withApiVersion(task.getApiVersion())
              .withKind(task.getKind())
              .withName(task.getMetadata().getName())
              .withNamespace(namespace)
              .withUid(task.getMetadata().getUid())
              .withResourceVersion(task.getMetadata().getResourceVersion())
              .build())
          .withType(type)
          .withReason(reason)
          .withMessage(message)
          .withFirstTimestamp(now)
          .withLastTimestamp(now)
          .withCount(1)
          .withNewSource().withComponent(COMPONENT).endSource()
          .build()).create();
      LOG.info("{}: {}", reason, message);
    } catch (RuntimeException e) {
      LOG.warn("{}: {} (the event could not be recorded: {})", reason, message, e.getMessage());
    }
  }
}
