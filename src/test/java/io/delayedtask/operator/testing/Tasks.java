package io.delayedtask.operator.testing;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.DelayedTaskSpec;
import io.delayedtask.operator.api.v1alpha1.DelayedTaskStatus;
import io.delayedtask.operator.api.v1alpha1.Phase;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.JobTemplateSpec;
import io.fabric8.kubernetes.api.model.batch.v1.JobTemplateSpecBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Instant;
import java.time.format.DateTimeFormatter;
import java.util.Optional;
import java.util.function.Consumer;

/** DelayedTask manifests and reads for tests. */
public final class Tasks {
  private Tasks() {}

  public static DelayedTask task(String namespace, String name, Consumer<DelayedTaskSpec> spec) {
    DelayedTask task = new DelayedTask();
    task.setMetadata(new ObjectMetaBuilder().withName(name).withNamespace(namespace).build());
    DelayedTaskSpec taskSpec = new DelayedTaskSpec();
    spec.accept(taskSpec);
    task.setSpec(taskSpec);
    return task;
  }

  /** Fires by recording it in the status only (no jobTemplate). */
  public static DelayedTask statusOnly(String namespace, String name, Instant runAt) {
    return task(namespace, name, spec -> spec.setRunAt(rfc3339(runAt)));
  }

  /** Fires by creating a Job from a small template. */
  public static DelayedTask withJob(String namespace, String name, Instant runAt) {
    return task(
        namespace,
        name,
        spec -> {
          spec.setRunAt(rfc3339(runAt));
          spec.setJobTemplate(jobTemplate());
        });
  }

  /** The smallest Job template: one container that exits at once. */
  public static JobTemplateSpec jobTemplate() {
    return new JobTemplateSpecBuilder()
        .withNewMetadata()
        .addToLabels("app", "fault-test")
        .endMetadata()
        .withNewSpec()
        .withBackoffLimit(0)
        .withNewTemplate()
        .withNewSpec()
        .addNewContainer()
        .withName("main")
        .withImage("busybox:1.36")
        .withCommand("true")
        .endContainer()
        .withRestartPolicy("Never")
        .endSpec()
        .endTemplate()
        .endSpec()
        .build();
  }

  /** RFC 3339 to the millisecond: due times are kept in whole ms. */
  public static String rfc3339(Instant instant) {
    return DateTimeFormatter.ISO_INSTANT.format(
        instant.truncatedTo(java.time.temporal.ChronoUnit.MILLIS));
  }

  /** A Job template running busybox once, with a label and an annotation of its own. */
  public static JobTemplateSpec busyboxJob() {
    return new JobTemplateSpecBuilder()
        .withNewMetadata()
        .addToLabels("team", "billing")
        .addToAnnotations("owner", "ops@example.com")
        .endMetadata()
        .withNewSpec()
        .withBackoffLimit(0)
        .withNewTemplate()
        .withNewSpec()
        .addNewContainer()
        .withName("main")
        .withImage("busybox")
        .withCommand("echo", "hello")
        .endContainer()
        .withRestartPolicy("Never")
        .endSpec()
        .endTemplate()
        .endSpec()
        .build();
  }

  public static DelayedTask get(KubernetesClient client, String namespace, String name) {
    return client.resources(DelayedTask.class).inNamespace(namespace).withName(name).get();
  }

  public static Optional<Phase> phase(KubernetesClient client, String namespace, String name) {
    return Optional.ofNullable(get(client, namespace, name))
        .map(DelayedTask::getStatus)
        .map(DelayedTaskStatus::getPhase);
  }

  public static DelayedTask create(KubernetesClient client, DelayedTask task) {
    return client
        .resources(DelayedTask.class)
        .inNamespace(task.getMetadata().getNamespace())
        .resource(task)
        .create();
  }

  /** Changes the spec the way kubectl edit would (read, change, write back). */
  public static DelayedTask editSpec(
      KubernetesClient client, String namespace, String name, Consumer<DelayedTaskSpec> change) {
    return client
        .resources(DelayedTask.class)
        .inNamespace(namespace)
        .withName(name)
        .edit(
            t -> {
              change.accept(t.getSpec());
              return t;
            });
  }
}
