package io.delayedtask.operator.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.delayedtask.operator.testing.DelayedTaskCrd;
import io.delayedtask.operator.testing.RealKubernetes;
import io.delayedtask.operator.testing.RealKubernetes.Kubectl;
import io.delayedtask.operator.testing.RequiresRealKubernetes;
import io.fabric8.kubernetes.api.model.apiextensions.v1.JSONSchemaProps;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code kubectl explain} is where Kubernetes users look first. Against a real API server (which
 * publishes the CRD's schema as OpenAPI v3), it prints for the resource and each of these fields
 * the description the Java model gave it, not an empty one.
 */
@RequiresRealKubernetes
class KubectlExplainIT {
  private static RealKubernetes kube;

  @BeforeAll
  static void start() {
    kube = RealKubernetes.shared();
    kube.applyCrd(DelayedTaskCrd.FILE);
  }

  @ParameterizedTest(name = "kubectl explain {0}")
  @ValueSource(
      strings = {
        "dt",
        "dt.spec",
        "dt.status",
        "dt.spec.jobTemplate",
        "dt.status.conditions",
        "dt.spec.sink",
        "dt.spec.delivery",
        "dt.status.delivery",
        "dt.spec.data",
        "dt.spec.contentType",
        "dt.spec.ceOverrides",
        "dt.spec.ceOverrides.extensions",
        "dt.status.sinkUri",
        "dt.spec.sink.ref.kind"
      })
  void printsTheFieldsDescriptionFromTheCrd(String field) {
    AtomicReference<Kubectl.Result> explained = new AtomicReference<>();
    // The API server publishes a CRD's OpenAPI a moment after it is established.
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () -> {
              explained.set(kube.kubectl("explain", field));
              return explained.get().ok();
            });

    String description = descriptionBlock(explained.get().stdout());

    assertThat(description).as(explained.get().stdout()).isNotBlank().isNotEqualTo("<empty>");
    JSONSchemaProps schema = schemaOf(field);
    String expected = schema.getDescription();
    if (schema.getItems() != null && schema.getItems().getSchema().getDescription() != null) {
      expected +=
          " "
              + schema
                  .getItems()
                  .getSchema()
                  .getDescription(); // a list's, then its items' (conditions)
    }
    assertThat(description).isEqualTo(normalized(expected));
  }

  /**
   * The Job's own fields under spec.jobTemplate.spec, down to the containers of its pod template.
   */
  @ParameterizedTest(name = "kubectl explain {0} lists {1}")
  @org.junit.jupiter.params.provider.CsvSource({
    "dt.spec.jobTemplate.spec, backoffLimit",
    "dt.spec.jobTemplate.spec, activeDeadlineSeconds",
    "dt.spec.jobTemplate.spec.template.spec, restartPolicy",
    "dt.spec.jobTemplate.spec.template.spec.containers, image"
  })
  void listsTheJobsFieldsUnderTheTemplate(String field, String jobField) {
    AtomicReference<Kubectl.Result> explained = new AtomicReference<>();
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () -> {
              explained.set(kube.kubectl("explain", field));
              return explained.get().ok();
            });
    List<String> lines = explained.get().stdout().lines().toList();
    assertThat(lines)
        .as(explained.get().stdout())
        .contains("FIELDS:")
        .anySatisfy(line -> assertThat(line.trim()).startsWith(jobField + "\t"));
  }

  /** The text under DESCRIPTION:, up to the next blank line (kubectl indents it), on one line. */
  private static String descriptionBlock(String explainOutput) {
    List<String> lines = explainOutput.lines().toList();
    int start = lines.indexOf("DESCRIPTION:");
    assertThat(start)
        .as("kubectl explain prints a DESCRIPTION:%n%s", explainOutput)
        .isNotNegative();
    return normalized(
        String.join(
            " ",
            lines.subList(start + 1, lines.size()).stream()
                .takeWhile(line -> !line.isBlank())
                .toList()));
  }

  /** The schema of {@code dt.a.b}: the root's for {@code dt}. */
  private static JSONSchemaProps schemaOf(String field) {
    JSONSchemaProps schema =
        DelayedTaskCrd.load().getSpec().getVersions().get(0).getSchema().getOpenAPIV3Schema();
    for (String name : field.split("\\.")) {
      if (name.equals("dt")) {
        continue;
      }
      schema = schema.getProperties().get(name);
      assertThat(schema).as("%s in the CRD", field).isNotNull();
    }
    return schema;
  }

  private static String normalized(String text) {
    return text == null ? "" : text.trim().replaceAll("\\s+", " ");
  }
}
