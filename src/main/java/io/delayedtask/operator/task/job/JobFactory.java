package io.delayedtask.operator.task.job;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.task.time.Times;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.JobSpec;
import io.fabric8.kubernetes.api.model.batch.v1.JobSpecBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.JobTemplateSpec;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Builds the Job a task creates when it fires: its template, our name, owner, labels and
 * annotations.
 */
public final class JobFactory {

  private JobFactory() {}

  public static Job jobFor(DelayedTask task, Instant due, Instant firedAt) {
    JobTemplateSpec template = task.getSpec().getJobTemplate();
    ObjectMeta templateMeta =
        template.getMetadata() == null ? new ObjectMeta() : template.getMetadata();
    String taskName = task.getMetadata().getName();
    String uid = task.getMetadata().getUid();

    Map<String, String> labels = new LinkedHashMap<>();
    if (templateMeta.getLabels() != null) {
      labels.putAll(templateMeta.getLabels());
    }
    labels.put(TaskLabels.TASK, JobNames.taskLabelValue(taskName));
    labels.put(TaskLabels.TASK_UID, uid);

    Map<String, String> annotations = new LinkedHashMap<>();
    if (templateMeta.getAnnotations() != null) {
      annotations.putAll(templateMeta.getAnnotations());
    }
    if (task.getSpec().getPayload() != null) {
      task.getSpec()
          .getPayload()
          .forEach((key, value) -> annotations.put(TaskLabels.PAYLOAD_PREFIX + key, value));
    }
    annotations.put(TaskLabels.DUE_TIME, Times.format(due));
    annotations.put(TaskLabels.FIRED_TIME, Times.format(firedAt));

    return new JobBuilder()
        .withNewMetadata()
        .withName(JobNames.jobName(taskName, uid, due))
        .withNamespace(task.getMetadata().getNamespace())
        .withLabels(labels)
        .withAnnotations(annotations)
        .withOwnerReferences(controllerReference(task))
        .endMetadata()
        .withSpec(withTraceContext(template.getSpec(), TaskTrace.of(task, due)))
        .build();
  }

  /**
   * A copy of the template's spec whose every container and init container has the firing's trace
   * context as {@code TRACEPARENT} (and {@code TRACESTATE}), OpenTelemetry's environment-variable
   * carrier; the template's own variables of those names are replaced. The task's own template is
   * not changed.
   */
  static JobSpec withTraceContext(JobSpec spec, TaskTrace trace) {
    if (spec == null || spec.getTemplate() == null || spec.getTemplate().getSpec() == null) {
      return spec;
    }
    JobSpec copy = new JobSpecBuilder(spec).build();
    Map<String, String> env = trace.environment();
    PodSpec pod = copy.getTemplate().getSpec();
    for (List<Container> containers :
        List.of(orEmpty(pod.getContainers()), orEmpty(pod.getInitContainers()))) {
      for (Container container : containers) {
        List<EnvVar> vars = new ArrayList<>(orEmpty(container.getEnv()));
        vars.removeIf(
            v ->
                TaskTrace.TRACEPARENT_ENV.equals(v.getName())
                    || TaskTrace.TRACESTATE_ENV.equals(v.getName()));
        env.forEach((name, value) -> vars.add(new EnvVar(name, value, null)));
        container.setEnv(vars);
      }
    }
    return copy;
  }

  private static <T> List<T> orEmpty(List<T> list) {
    return list == null ? List.of() : list;
  }

  static OwnerReference controllerReference(DelayedTask task) {
    return new OwnerReferenceBuilder()
        .withApiVersion(task.getApiVersion())
        .withKind(task.getKind())
        .withName(task.getMetadata().getName())
        .withUid(task.getMetadata().getUid())
        .withController(true)
        .withBlockOwnerDeletion(true)
        .build();
  }

  /** True when the Job's controller is this task (same uid). */
  public static boolean isControlledBy(Job job, DelayedTask task) {
    return job.getMetadata().getOwnerReferences() != null
        && job.getMetadata().getOwnerReferences().stream()
            .anyMatch(
                ref ->
                    Boolean.TRUE.equals(ref.getController())
                        && task.getMetadata().getUid().equals(ref.getUid()));
  }
}
