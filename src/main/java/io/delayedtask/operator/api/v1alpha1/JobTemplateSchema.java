package io.delayedtask.operator.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.crd.generator.annotation.PreserveUnknownFields;
import com.fasterxml.jackson.databind.JsonNode;
import java.util.Map;

/**
 * The CRD schema of spec.jobTemplate (never instantiated): labels and annotations are typed, the
 * Job spec is kept as written and validated by the API server when the Job is created.
 */
final class JobTemplateSchema {

  @JsonPropertyDescription("Labels and annotations for the created Job.")
  public Metadata metadata;

  @PreserveUnknownFields
  @JsonPropertyDescription("A batch/v1 JobSpec: the Job to run when the task fires.")
  public JsonNode spec;

  private JobTemplateSchema() {}

  static final class Metadata {
    @JsonPropertyDescription("Labels copied onto the Job.")
    public Map<String, String> labels;

    @JsonPropertyDescription("Annotations copied onto the Job.")
    public Map<String, String> annotations;

    @JsonPropertyDescription("Must be empty or the task's own namespace: the Job always lives beside its task.")
    public String namespace;

    private Metadata() {}
  }
}
