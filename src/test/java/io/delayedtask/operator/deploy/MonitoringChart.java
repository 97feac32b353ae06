package io.delayedtask.operator.deploy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The chart's monitoring objects, rendered with prometheusRule and dashboard enabled: the rules as
 * a Prometheus rules file, and every PromQL expression of the rules and the dashboard.
 */
final class MonitoringChart {
  static final String VALUES =
      """
      prometheusRule: {enabled: true}
      dashboard: {enabled: true}
      """;

  /** What the default selector expects a scrape to label the operator's series with. */
  static final String JOB = RenderedChart.FULLNAME;

  private static final ObjectMapper JSON = new ObjectMapper();

  private MonitoringChart() {}

  static RenderedChart render() {
    return RenderedChart.render(VALUES);
  }

  static GenericKubernetesResource prometheusRule(RenderedChart chart) {
    return chart.objects().stream()
        .filter(o -> o.getKind().equals("PrometheusRule"))
        .map(GenericKubernetesResource.class::cast)
        .findFirst()
        .orElseThrow(() -> new AssertionError("no PrometheusRule rendered"));
  }

  /** The PrometheusRule's spec is a Prometheus rules file ({@code groups:}). */
  static String rulesFile(RenderedChart chart) {
    Object spec = prometheusRule(chart).getAdditionalProperties().get("spec");
    return new KubernetesSerialization().asYaml(spec);
  }

  @SuppressWarnings("unchecked")
  static List<Map<String, Object>> rules(RenderedChart chart) {
    Map<String, Object> spec =
        (Map<String, Object>) prometheusRule(chart).getAdditionalProperties().get("spec");
    List<Map<String, Object>> rules = new ArrayList<>();
    for (Map<String, Object> group : (List<Map<String, Object>>) spec.get("groups")) {
      rules.addAll((List<Map<String, Object>>) group.get("rules"));
    }
    return rules;
  }

  /** The dashboard JSON as the chart ships it (the file, which the ConfigMap carries). */
  static JsonNode dashboardFile() {
    try {
      return JSON.readTree(
          Files.readString(Manifests.CHART.resolve("dashboards/delayed-task-operator.json")));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static ConfigMap dashboardConfigMap(RenderedChart chart) {
    return chart.named(ConfigMap.class, RenderedChart.FULLNAME + "-dashboard");
  }

  /** Every target expression of every panel, in order. */
  static List<String> dashboardExpressions(JsonNode dashboard) {
    List<String> expressions = new ArrayList<>();
    for (JsonNode panel : dashboard.path("panels")) {
      for (JsonNode target : panel.path("targets")) {
        expressions.add(target.path("expr").asText());
      }
    }
    return expressions;
  }
}
