package io.delayedtask.operator.api;

import static org.assertj.core.api.Assertions.assertThat;

import io.delayedtask.operator.api.v1alpha1.DelayedTaskSpec;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceColumnDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinitionVersion;
import io.fabric8.kubernetes.api.model.apiextensions.v1.JSONSchemaProps;
import io.fabric8.kubernetes.api.model.apiextensions.v1.ValidationRule;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZoneId;
import java.util.Comparator;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** What the CRD generated at process-classes promises beyond the schema of the Java classes. */
class GeneratedCrdTest {
  private static final Path GENERATED =
      Path.of("target", "classes", "META-INF", "fabric8", "delayedtasks.delayedtask.io-v1.yml");
  private static final Pattern CEL_MATCHES = Pattern.compile("matches\\(r'([^']*)'\\)");
  private static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();

  @Test
  void printerColumnsAreInKubectlOrderPhaseDueJobAgeThenTheWideOnes() throws Exception {
    assertThat(version().getAdditionalPrinterColumns())
        .extracting(
            CustomResourceColumnDefinition::getName,
            CustomResourceColumnDefinition::getJsonPath,
            CustomResourceColumnDefinition::getPriority)
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple("Phase", ".status.phase", 0),
            org.assertj.core.groups.Tuple.tuple("Due", ".status.dueTime", 0),
            org.assertj.core.groups.Tuple.tuple("Job", ".status.jobName", 0),
            org.assertj.core.groups.Tuple.tuple("Age", ".metadata.creationTimestamp", 0),
            org.assertj.core.groups.Tuple.tuple("Attempts", ".status.delivery.attempts", 1),
            org.assertj.core.groups.Tuple.tuple("Sink", ".status.sinkUri", 1));
  }

  @Test
  void reorderingRestoresTheDeclaredOrderWhateverOrderTheGeneratorWrote() throws Exception {
    CustomResourceDefinition crd =
        SERIALIZATION.unmarshal(Files.readString(GENERATED), CustomResourceDefinition.class);
    CustomResourceDefinitionVersion version = crd.getSpec().getVersions().get(0);
    // What the crd-generator 7.5.2 writes: sorted by jsonPath, case-insensitively.
    version.setAdditionalPrinterColumns(
        version.getAdditionalPrinterColumns().stream()
            .sorted(
                Comparator.comparing(
                    CustomResourceColumnDefinition::getJsonPath, String.CASE_INSENSITIVE_ORDER))
            .toList());
    String sorted = SERIALIZATION.asYaml(crd);
    assertThat(sorted.indexOf("\"Age\""))
        .as("the generator's order puts Age first")
        .isLessThan(sorted.indexOf("\"Phase\""));

    String reordered = PrinterColumnOrder.reorder(sorted);

    assertThat(reordered).isEqualTo(Files.readString(GENERATED));
    assertThat(PrinterColumnOrder.reorder(reordered)).as("idempotent").isEqualTo(reordered);
  }

  /**
   * A client-side {@code kubectl apply} keeps the whole CRD, as JSON, in its last-applied
   * annotation, and an object's annotations are at most 256 KiB together: the Job schema under the
   * template must leave the CRD well below (75 KiB when it was added).
   */
  @Test
  void theCrdFitsTheLastAppliedAnnotationOfAClientSideApply() throws Exception {
    CustomResourceDefinition crd =
        SERIALIZATION.unmarshal(Files.readString(GENERATED), CustomResourceDefinition.class);
    int bytes = SERIALIZATION.asJson(crd).getBytes(java.nio.charset.StandardCharsets.UTF_8).length;
    assertThat(bytes).as("the CRD as compact JSON").isLessThan(256 * 1024 - 32 * 1024);
    assertThat(
            crd.getSpec()
                .getVersions()
                .get(0)
                .getSchema()
                .getOpenAPIV3Schema()
                .getProperties()
                .get("spec")
                .getProperties()
                .get("jobTemplate")
                .getProperties()
                .get("spec")
                .getProperties())
        .as("the Job's fields, for kubectl explain")
        .containsKeys("backoffLimit", "template", "completions");
  }

  /** As metav1.Condition lists: a map keyed by type, so the API server refuses two of one type. */
  @Test
  void statusConditionsAreAMapListKeyedByARequiredTypeWithDescribedItems() throws Exception {
    JSONSchemaProps conditions =
        version()
            .getSchema()
            .getOpenAPIV3Schema()
            .getProperties()
            .get("status")
            .getProperties()
            .get("conditions");
    assertThat(conditions.getXKubernetesListType()).isEqualTo("map");
    assertThat(conditions.getXKubernetesListMapKeys()).containsExactly("type");
    JSONSchemaProps item = conditions.getItems().getSchema();
    assertThat(item.getRequired()).containsExactly("type");
    assertThat(item.getDescription()).contains("one per type");
  }

  @Test
  void runAtAndDelayAreShortSoTheirRulesCostLittle() throws Exception {
    JSONSchemaProps spec = spec();
    assertThat(spec.getProperties().get("runAt").getMaxLength()).isEqualTo(64L);
    assertThat(spec.getProperties().get("delay").getMaxLength()).isEqualTo(64L);
    assertThat(spec.getProperties().get("timeZone").getMaxLength()).isEqualTo(64L);
  }

  /** CEL can only check a zone's shape: it must let through every zone the operator knows. */
  @Test
  void theTimeZoneRuleAcceptsEveryZoneTheOperatorKnowsAndRefusesWhatIsNoName() throws Exception {
    Pattern shape =
        celPattern(spec().getProperties().get("timeZone").getXKubernetesValidations().get(0));
    assertThat(ZoneId.getAvailableZoneIds()).allSatisfy(zone -> assertThat(zone).matches(shape));
    assertThat(
            List.of(
                "Europe/Berlin",
                "America/Argentina/Buenos_Aires",
                "Etc/GMT+5",
                "UTC",
                "America/Port-au-Prince"))
        .allSatisfy(zone -> assertThat(zone).matches(shape));
    assertThat(List.of("", "+01:00", "Europe/", "/Berlin", "Europe Berlin", "Europe/Berlin;drop"))
        .allSatisfy(zone -> assertThat(zone).doesNotMatch(shape));
    assertThat(DelayedTaskSpec.TIME_ZONE_SHAPE).isEqualTo(shape.pattern());
  }

  /** The rule on spec: a runAt without offset needs a timeZone. */
  @Test
  void aRunAtWithoutOffsetIsAcceptedOnlyWithATimeZone() throws Exception {
    ValidationRule rule =
        spec().getXKubernetesValidations().stream()
            .filter(r -> r.getRule().contains("timeZone"))
            .findFirst()
            .orElseThrow();
    assertThat(rule.getRule())
        .startsWith("!has(self.runAt) || has(self.timeZone) || self.runAt.matches(");
    assertThat(rule.getMessage()).contains("spec.runAt", "spec.timeZone", "offset");
    Pattern offsetAtEnd = celPattern(rule);
    Pattern runAtShape =
        celPattern(spec().getProperties().get("runAt").getXKubernetesValidations().get(0));
    for (String withOffset :
        List.of("2026-12-03T07:00:00Z", "2026-12-03t07:00:00.5z", "2026-12-03T08:00:00+01:00")) {
      assertThat(withOffset).matches(runAtShape);
      assertThat(offsetAtEnd.matcher(withOffset).find()).as(withOffset).isTrue();
    }
    for (String local : List.of("2026-12-03T07:00:00", "2027-03-28T02:30:00.250")) {
      assertThat(local).matches(runAtShape);
      assertThat(offsetAtEnd.matcher(local).find()).as(local).isFalse();
    }
    assertThat("2026-12-03T07:00").doesNotMatch(runAtShape);
    assertThat("2026-12-03T07:00:00.123456789Z").matches(runAtShape);
    assertThat("2026-12-03T07:00:00.1234567891Z")
        .as("beyond nanoseconds, as the operator")
        .doesNotMatch(runAtShape);
  }

  private static Pattern celPattern(ValidationRule rule) {
    Matcher m = CEL_MATCHES.matcher(rule.getRule());
    assertThat(m.find()).as(rule.getRule()).isTrue();
    return Pattern.compile(m.group(1));
  }

  private static CustomResourceDefinitionVersion version() throws Exception {
    assertThat(GENERATED).as("generated at process-classes").exists();
    return SERIALIZATION
        .unmarshal(Files.readString(GENERATED), CustomResourceDefinition.class)
        .getSpec()
        .getVersions()
        .get(0);
  }

  private static JSONSchemaProps spec() throws Exception {
    return version().getSchema().getOpenAPIV3Schema().getProperties().get("spec");
  }
}
