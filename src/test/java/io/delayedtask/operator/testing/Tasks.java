package io.delayedtask.operator.testing;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.DelayedTaskSpec;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.JobTemplateSpec;
import io.fabric8.kubernetes.api.model.batch.v1.JobTemplateSpecBuilder;
import java.time.Instant;
import java.time.format.DateTimeFormatter;
import java.util.function.Consumer;

/** DelayedTasks as a user would write them, for tests. */
public final class Tasks {
  private Tasks() {}

  /** Fires by recording it in the status only (no jobTemplate). */
  public static DelayedTask statusOnly(String namespace, String name, Instant runAt) {
    return task(namespace, name, spec -> spec.setRunAt(rfc3339(runAt)));
  }

  /** Fires by creating a Job from a small template. */
  public static DelayedTask withJob(String namespace, String name, Instant runAt) {
    return task(namespace, name, spec -> {
      spec.setRunAt(rfc3339(runAt));
      spec.setJobTemplate(jobTemplate());
    });
  }

  /** A task whose spec the caller fills in (for bad input). */
  public static DelayedTask task(String namespace, String name, Consumer<DelayedTaskSpec> spec) {
    DelayedTask task = new DelayedTask();
    task.setMetadata(new ObjectMetaBuilder().withNamespace(namespace).withName(name).build());
    DelayedTaskSpec value = new DelayedTaskSpec();
    spec.accept(value);
    task.setSpec(value);
    return task;
  }

  public static JobTemplateSpec jobTemplate() {
    return new JobTemplateSpecBuilder()
        .withNewMetadata().addToLabels("app", "fault-test").endMetadata()
        .withNewSpec()
        .withBackoffLimit(0)
        .withNewTemplate()
        .withNewSpec()
        .withRestartPolicy("Never")
        .addNewContainer().withName("main").withImage("busybox:1.36").withCommand("true").endContainer()
        .endSpec()
        .endTemplate()
        .endSpec()
        .build();
  }

  public static String rfc3339(Instant instant) {
    return DateTimeFormatter.ISO_INSTANT.format(instant);
  }
}
