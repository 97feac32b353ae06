package io.delayedtask.operator.api;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.JSONSchemaProps;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@code kubectl explain} prints a field's schema description: the resource and every field of the
 * generated CRD, spec and status included, must have one (they come from
 * {@code @JsonPropertyDescription} on the Java model, spec and status from the getters DelayedTask
 * overrides for them, the resource's from its {@code @JsonClassDescription} through
 * PrinterColumnOrder).
 */
class CrdDescriptionsTest {
  private static final Path GENERATED =
      Path.of("target", "classes", "META-INF", "fabric8", "delayedtasks.delayedtask.io-v1.yml");

  @Test
  void everyFieldOfTheSchemaHasADescription() throws Exception {
    CustomResourceDefinition crd =
        new KubernetesSerialization()
            .unmarshal(Files.readString(GENERATED), CustomResourceDefinition.class);
    JSONSchemaProps root = crd.getSpec().getVersions().get(0).getSchema().getOpenAPIV3Schema();
    List<String> fields = new ArrayList<>();
    List<String> undescribed = new ArrayList<>();
    walk(root, "", fields, undescribed);

    assertThat(fields)
        .as("the walk reaches spec, status and nested fields")
        .contains("spec", "status", "spec.jobTemplate.metadata.labels", "status.conditions[].type");
    assertThat(undescribed)
        .as("fields kubectl explain would print with an empty DESCRIPTION")
        .isEmpty();
    assertThat(root.getDescription()).as("kubectl explain dt").isNotBlank();
  }

  @Test
  void everyFieldOfTheQueueSchemaHasADescription() throws Exception {
    CustomResourceDefinition crd =
        new KubernetesSerialization()
            .unmarshal(
                Files.readString(
                    Path.of(
                        "target",
                        "classes",
                        "META-INF",
                        "fabric8",
                        "delayedtaskqueues.delayedtask.io-v1.yml")),
                CustomResourceDefinition.class);
    JSONSchemaProps root = crd.getSpec().getVersions().get(0).getSchema().getOpenAPIV3Schema();
    List<String> fields = new ArrayList<>();
    List<String> undescribed = new ArrayList<>();
    walk(root, "", fields, undescribed);

    assertThat(fields)
        .contains(
            "spec.maxDispatchesPerSecond",
            "spec.maxBurst",
            "spec.maxConcurrentDispatches",
            "spec.paused",
            "status.pending",
            "status.waiting",
            "status.inFlight",
            "status.oldestWaitingDueTime",
            "status.dispatchedTotal",
            "status.observedGeneration",
            "status.conditions[].type");
    assertThat(undescribed)
        .as("fields kubectl explain dtq would print with an empty DESCRIPTION")
        .isEmpty();
    assertThat(root.getDescription()).as("kubectl explain dtq").isNotBlank();
  }

  private static void walk(
      JSONSchemaProps schema, String path, List<String> fields, List<String> undescribed) {
    Map<String, JSONSchemaProps> properties = schema.getProperties();
    if (properties != null) {
      properties.forEach(
          (name, field) -> {
            String fieldPath = path.isEmpty() ? name : path + "." + name;
            fields.add(fieldPath);
            // The Job's own fields come from the fabric8 model, without descriptions (Kubernetes'
            // own
            // would make the CRD too large for a client-side apply); spec.jobTemplate.spec names
            // kubectl explain job.spec for them.
            boolean jobsOwn = fieldPath.startsWith("spec.jobTemplate.spec.");
            if (!jobsOwn && (field.getDescription() == null || field.getDescription().isBlank())) {
              undescribed.add(fieldPath);
            }
            walk(field, fieldPath, fields, undescribed);
          });
    }
    if (schema.getItems() != null && schema.getItems().getSchema() != null) {
      walk(schema.getItems().getSchema(), path + "[]", fields, undescribed);
    }
  }
}
