package io.delayedtask.operator.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.crd.generator.annotation.PreserveUnknownFields;
import io.fabric8.kubernetes.api.model.batch.v1.JobSpec;
import java.util.Map;

/**
 * The CRD schema of spec.jobTemplate (never instantiated): labels and annotations typed, and the
 * Job spec with the whole batch/v1 JobSpec schema of the fabric8 model, so {@code kubectl explain
 * dt.spec.jobTemplate.spec} lists the Job's fields and the API server refuses a wrong type at once.
 * Every object under it also keeps unknown fields (api/PrinterColumnOrder adds that at build time):
 * a Job field newer than the model is passed on, never pruned. The API server validates the Job
 * itself in the dry run when the task is scheduled.
 */
final class JobTemplateSchema {

  @JsonPropertyDescription("Labels and annotations for the created Job.")
  public Metadata metadata;

  @PreserveUnknownFields
  @JsonPropertyDescription(
      "A batch/v1 JobSpec: the Job to run when the task fires. kubectl explain job.spec "
          + "describes its fields.")
  public JobSpec spec;

  private JobTemplateSchema() {}

  static final class Metadata {
    @JsonPropertyDescription("Labels copied onto the Job.")
    public Map<String, String> labels;

    @JsonPropertyDescription("Annotations copied onto the Job.")
    public Map<String, String> annotations;

    @JsonPropertyDescription(
        "Must be empty or the task's own namespace: the Job always lives beside its task.")
    public String namespace;

    private Metadata() {}
  }
}
