package io.delayedtask.operator.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The chart's alerts and dashboard: opt-in, thresholds from values, labels and annotations. The
 * rules checked and unit-tested by Prometheus' own promtool: {@link PrometheusRulePromtoolIT}.
 */
class PrometheusRuleTest {
  private static final String RUNBOOKS =
      "https://github.com/delayedtask/delayed-task-operator/blob/main/docs/operations.md";

  private static RenderedChart chart;

  @BeforeAll
  static void render() {
    chart = MonitoringChart.render();
  }

  @Test
  void bothAreOffByDefault() {
    assertThat(RenderedChart.render("{}").objects())
        .noneMatch(o -> o.getKind().equals("PrometheusRule"))
        .noneMatch(
            o ->
                o.getKind().equals("ConfigMap")
                    && o.getMetadata().getName().endsWith("-dashboard"));
  }

  @Test
  void everyAlertHasASeverityASummaryAndARunbookUrlToItsHeadingInTheDocs() throws IOException {
    List<Map<String, Object>> rules = MonitoringChart.rules(chart);
    assertThat(rules)
        .extracting(r -> r.get("alert"))
        .containsExactly(
            "DelayedTaskNoReplicaFiring",
            "DelayedTaskOverdue",
            "DelayedTaskFireLagHigh",
            "DelayedTaskRedisUnreachable",
            "DelayedTaskFiringsFailing",
            "DelayedTaskScheduleDrift",
            "DelayedTaskDeliveriesFailing",
            "DelayedTaskAdmissionPolicyMissing");
    List<String> headings =
        Files.readAllLines(Path.of("docs", "operations.md")).stream()
            .filter(line -> line.startsWith("### "))
            .map(line -> line.substring(4).strip())
            .toList();
    for (Map<String, Object> rule : rules) {
      String alert = (String) rule.get("alert");
      @SuppressWarnings("unchecked")
      Map<String, Object> labels = (Map<String, Object>) rule.get("labels");
      @SuppressWarnings("unchecked")
      Map<String, Object> annotations = (Map<String, Object>) rule.get("annotations");
      assertThat(labels.get("severity")).as("%s severity", alert).isIn("warning", "critical");
      assertThat(annotations)
          .as("%s annotations", alert)
          .containsOnlyKeys("summary", "description", "runbook_url");
      assertThat(headings)
          .as("docs/operations.md: a runbook heading for %s", alert)
          .contains(alert);
      assertThat(annotations.get("runbook_url"))
          .as("%s runbook_url", alert)
          .isEqualTo(RUNBOOKS + "#" + alert.toLowerCase(java.util.Locale.ROOT));
    }
  }

  @Test
  void theRunbookBaseUrlIsTheChartsHomeAndComesFromValues() throws IOException {
    assertThat(Files.readString(Path.of("helm", "delayed-task-operator", "Chart.yaml")))
        .contains("home: " + RUNBOOKS.substring(0, RUNBOOKS.indexOf("/blob/")));
    RenderedChart mine =
        RenderedChart.render(
            "prometheusRule: {enabled: true, runbookBaseUrl: 'https://wiki.example.com/dto'}");
    assertThat(MonitoringChart.rules(mine))
        .allSatisfy(
            r ->
                assertThat(((Map<?, ?>) r.get("annotations")).get("runbook_url"))
                    .asString()
                    .startsWith("https://wiki.example.com/dto#delayedtask"));
  }

  @Test
  void thresholdsSelectorAndLabelsComeFromValues() {
    RenderedChart custom =
        RenderedChart.render(
            """
        prometheusRule:
          enabled: true
          labels: {release: prometheus}
          alertLabels: {team: platform}
          selector: 'job="delayed-tasks"'
          thresholds: {oldestOverdueSeconds: 120, fireLagP99Seconds: 2.5, failedFirings: 3, driftRepairs: 7, failedDeliveries: 4}
        """);
    GenericKubernetesResource rule = MonitoringChart.prometheusRule(custom);
    assertThat(rule.getMetadata().getLabels()).containsEntry("release", "prometheus");
    Map<String, String> expressions = new java.util.HashMap<>();
    for (Map<String, Object> r : MonitoringChart.rules(custom)) {
      expressions.put((String) r.get("alert"), (String) r.get("expr"));
      assertThat(r.get("labels"))
          .asInstanceOf(org.assertj.core.api.InstanceOfAssertFactories.MAP)
          .containsEntry("team", "platform");
    }
    assertThat(expressions.get("DelayedTaskOverdue"))
        .endsWith("> 120")
        .contains("delayedtask_schedule_oldest_overdue_seconds{job=\"delayed-tasks\"}");
    assertThat(expressions.get("DelayedTaskFireLagHigh")).endsWith("> 2.5");
    assertThat(expressions.get("DelayedTaskFiringsFailing"))
        .endsWith("> 3")
        .contains("{job=\"delayed-tasks\",outcome=\"failed\"}");
    assertThat(expressions.get("DelayedTaskScheduleDrift")).endsWith("> 7");
    assertThat(expressions.get("DelayedTaskDeliveriesFailing"))
        .endsWith("> 4")
        .contains("{job=\"delayed-tasks\",outcome=~\"failed|dead_lettered\"}");
    assertThat(expressions.values()).noneMatch(e -> e.contains("dto-delayed-task-operator"));
  }

  @Test
  void theDefaultSelectorIsTheServiceMonitorsJobAndNamespace() {
    assertThat(MonitoringChart.rules(chart))
        .allSatisfy(
            r ->
                assertThat((String) r.get("expr"))
                    .contains(
                        "job=\""
                            + MonitoringChart.JOB
                            + "\",namespace=\""
                            + RenderedChart.NAMESPACE
                            + "\""));
  }

  @Test
  void theDashboardConfigMapCarriesTheFileWithTheSidecarLabel() throws IOException {
    ConfigMap dashboard = MonitoringChart.dashboardConfigMap(chart);
    assertThat(dashboard.getMetadata().getLabels()).containsEntry("grafana_dashboard", "1");
    String json = dashboard.getData().get("delayed-task-operator.json");
    assertThat(new com.fasterxml.jackson.databind.ObjectMapper().readTree(json))
        .isEqualTo(MonitoringChart.dashboardFile());
    assertThat(
            RenderedChart.render("dashboard: {enabled: true, namespace: monitoring}")
                .named(ConfigMap.class, RenderedChart.FULLNAME + "-dashboard")
                .getMetadata()
                .getNamespace())
        .isEqualTo("monitoring");
  }

  @Test
  void theDashboardHasThePanelsTheIssueAsksFor() {
    JsonNode dashboard = MonitoringChart.dashboardFile();
    List<String> titles = new java.util.ArrayList<>();
    dashboard.path("panels").forEach(p -> titles.add(p.path("title").asText()));
    assertThat(titles)
        .containsExactly(
            "Fire lag",
            "Firings by outcome",
            "Waiting and in-flight entries",
            "Oldest overdue entry",
            "Resync repairs",
            "Redis and API errors",
            "Deliveries by outcome",
            "Delivery request duration",
            "Admission policy present",
            "JVM heap",
            "Queues: waiting tasks and dispatches");
    assertThat(MonitoringChart.dashboardExpressions(dashboard))
        .allSatisfy(e -> assertThat(e).contains("job=~\"$job\""));
  }
}
