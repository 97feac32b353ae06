package io.delayedtask.operator.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.delayedtask.operator.DelayedTaskOperator;
import io.delayedtask.operator.api.v1alpha1.DelayedTaskQueue;
import io.delayedtask.operator.api.v1alpha1.DelayedTaskQueueSpec;
import io.delayedtask.operator.api.v1alpha1.Phase;
import io.delayedtask.operator.config.OperatorConfig;
import io.delayedtask.operator.reconcile.ShippedPolicies;
import io.delayedtask.operator.testing.OperatorFixture;
import io.delayedtask.operator.testing.OperatorFixture.OnRealKubernetes;
import io.delayedtask.operator.testing.PrometheusServer;
import io.delayedtask.operator.testing.RealKubernetes;
import io.delayedtask.operator.testing.RequiresRealKubernetes;
import io.delayedtask.operator.testing.Tasks;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicy;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicyBindingBuilder;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicyBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.UnaryOperator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Every PromQL expression the chart ships (the PrometheusRule's alerts and the dashboard's panels)
 * evaluated by a real Prometheus that scrapes a running operator, after it fired a few tasks: each
 * evaluates without error, names only metrics the operator exports, the panels show data, and on
 * this healthy operator no alert fires.
 */
@RequiresRealKubernetes
class MonitoringIT {
  private static String NS;
  private static final Duration TIMEOUT = Duration.ofSeconds(60);

  /** What Grafana substitutes: the job variable, and a rate window that holds a few 1 s scrapes. */
  private static final Map<String, String> GRAFANA_VARIABLES =
      Map.of("$job", MonitoringChart.JOB, "$__rate_interval", "30s");

  /**
   * Registered by JOSDK only once a reconciliation fails: the panel is empty on a healthy operator.
   */
  private static final Set<String> ONLY_AFTER_FAILURES =
      Set.of("operator_sdk_reconciliations_failed_total");

  private static final Pattern METRIC =
      Pattern.compile("\\b((?:delayedtask|operator_sdk|jvm)_[a-z_]+)\\b");

  private static OnRealKubernetes world;
  private static RealKubernetes kube;
  private static DelayedTaskOperator operator;
  private static PrometheusServer prometheus;
  private static RenderedChart chart;

  @BeforeAll
  static void start() {
    chart = MonitoringChart.render();
    kube = RealKubernetes.shared();
    // Only the resync at leadership: a periodic one racing a firing may re-add a just-acknowledged
    // entry, which the drift alert would then (rightly, but here by chance) count. The admission
    // check on, with the shipped policies bound to this namespace only, so the policy metric and
    // its
    // alert are there to evaluate on a healthy operator.
    world =
        OperatorFixture.startOnRealKubernetes(
            kube,
            "monitoring",
            namespace ->
                Map.of(
                    OperatorConfig.RESYNC_SECONDS,
                    "300",
                    OperatorConfig.ADMISSION_POLICY,
                    harmlessDenyingBinding(kube.client(), namespace)),
            UnaryOperator.identity());
    NS = world.namespace();
    operator = world.operator();
    prometheus =
        PrometheusServer.start(
            MonitoringChart.JOB,
            "127.0.0.1:" + operator.httpPort(),
            "{namespace: " + RenderedChart.NAMESPACE + "}",
            MonitoringChart.rulesFile(chart));

    // Due far enough ahead that a slow machine has scheduled them in time: fire lag stays small.
    Instant soon = Instant.now().plusSeconds(5);
    Tasks.create(kube.client(), Tasks.statusOnly(NS, "first", soon));
    Tasks.create(kube.client(), Tasks.statusOnly(NS, "second", soon.plusMillis(500)));
    Tasks.create(kube.client(), Tasks.withJob(NS, "with-job", soon));
    Tasks.create(kube.client(), Tasks.statusOnly(NS, "later", Instant.now().plusSeconds(3600)));
    // A queue with one task through it, for the queue panel's series.
    DelayedTaskQueue queue = new DelayedTaskQueue();
    queue.setMetadata(new ObjectMetaBuilder().withName("emails").withNamespace(NS).build());
    queue.setSpec(new DelayedTaskQueueSpec());
    kube.client().resources(DelayedTaskQueue.class).inNamespace(NS).resource(queue).create();
    Tasks.create(
        kube.client(),
        Tasks.task(
            NS,
            "queued",
            spec -> {
              spec.setRunAt(Tasks.rfc3339(soon));
              spec.setQueue("emails");
            }));
    await()
        .atMost(TIMEOUT)
        .until(
            () ->
                Tasks.phase(kube.client(), NS, "second").orElse(null) == Phase.Fired
                    && Tasks.phase(kube.client(), NS, "with-job").orElse(null) == Phase.Running
                    && Tasks.phase(kube.client(), NS, "queued").orElse(null) == Phase.Fired);
    // Prometheus has scraped the firings, and a few samples since, for rate() to work with.
    await()
        .atMost(TIMEOUT)
        .until(
            () ->
                value("delayedtask_fire_lag_seconds_count{job=\"" + MonitoringChart.JOB + "\"}")
                        >= 3
                    && value(
                            "count_over_time(delayedtask_leader{job=\""
                                + MonitoringChart.JOB
                                + "\"}[1m])")
                        >= 5
                    // The queue's meters follow its status pass (every 5 s on the leader).
                    && value(
                            "sum(delayedtask_queue_dispatches_total{job=\""
                                + MonitoringChart.JOB
                                + "\"})")
                        >= 1);
  }

  @AfterAll
  static void stop() {
    if (prometheus != null) {
      prometheus.close();
    }
    if (world != null) {
      world.close();
    }
  }

  @Test
  void everyDashboardExpressionEvaluatesWithData() {
    List<String> expressions =
        MonitoringChart.dashboardExpressions(MonitoringChart.dashboardFile());
    assertThat(expressions).hasSizeGreaterThan(10);
    for (String panelExpression : expressions) {
      String expression = substitute(panelExpression);
      JsonNode response = prometheus.query(expression);
      assertThat(response.path("status").asText())
          .as("%s: %s", expression, response)
          .isEqualTo("success");
      if (metricsOf(expression).stream().noneMatch(ONLY_AFTER_FAILURES::contains)) {
        assertThat(response.path("data").path("result")).as("data for %s", expression).isNotEmpty();
      }
    }
  }

  @Test
  void theDashboardsJobVariableFindsTheOperator() {
    JsonNode values = prometheus.get("/api/v1/label/job/values?match[]=delayedtask_leader");
    List<String> jobs = new ArrayList<>();
    values.path("data").forEach(v -> jobs.add(v.asText()));
    assertThat(jobs).containsExactly(MonitoringChart.JOB);
  }

  @Test
  void everyMetricTheRulesAndTheDashboardNameIsExported() {
    Set<String> names = new TreeSet<>();
    MonitoringChart.rules(chart).forEach(r -> names.addAll(metricsOf((String) r.get("expr"))));
    MonitoringChart.dashboardExpressions(MonitoringChart.dashboardFile())
        .forEach(e -> names.addAll(metricsOf(e)));
    names.removeAll(ONLY_AFTER_FAILURES);
    assertThat(names)
        .contains(
            "delayedtask_leader",
            "delayedtask_redis_up",
            "delayedtask_due_times_total",
            "delayedtask_resync_drift_repairs_total",
            "delayedtask_fire_lag_seconds_bucket",
            "jvm_memory_used_bytes");
    for (String name : names) {
      assertThat(
              prometheus
                  .query("count({__name__=\"" + name + "\",job=\"" + MonitoringChart.JOB + "\"})")
                  .path("data")
                  .path("result"))
          .as("series of %s scraped from the operator", name)
          .isNotEmpty();
    }
  }

  @Test
  void everyAlertExpressionEvaluatesAndNoneFiresOnAHealthyOperator() {
    for (Map<String, Object> rule : MonitoringChart.rules(chart)) {
      String expression = (String) rule.get("expr");
      JsonNode response = prometheus.query(expression);
      assertThat(response.path("status").asText())
          .as("%s: %s", rule.get("alert"), response)
          .isEqualTo("success");
      assertThat(response.path("data").path("result"))
          .as("%s on a healthy operator: %s", rule.get("alert"), expression)
          .isEmpty();
    }
  }

  @Test
  void prometheusLoadsAndEvaluatesEveryRuleWithoutError() {
    await()
        .atMost(TIMEOUT)
        .untilAsserted(
            () -> {
              List<JsonNode> rules = new ArrayList<>();
              prometheus
                  .rules()
                  .path("data")
                  .path("groups")
                  .forEach(g -> g.path("rules").forEach(rules::add));
              assertThat(rules).hasSize(MonitoringChart.rules(chart).size());
              assertThat(rules)
                  .allSatisfy(
                      r -> {
                        assertThat(r.path("health").asText())
                            .as("%s: %s", r.path("name").asText(), r.path("lastError"))
                            .isEqualTo("ok");
                        assertThat(r.path("state").asText())
                            .as(r.path("name").asText())
                            .isEqualTo("inactive");
                      });
            });
  }

  /**
   * The shipped policies (the operator compares them by content) under names of this test's own,
   * bound with Deny to this test's namespace only, so that other tests on the shared API server are
   * not touched; the tasks here are written by an admin, whom they admit.
   */
  private static String harmlessDenyingBinding(KubernetesClient client, String namespace) {
    List<String> bindings = new ArrayList<>();
    try (InputStream file =
        Files.newInputStream(Manifests.PLAIN.resolve("15-admission-policy.yaml"))) {
      for (ValidatingAdmissionPolicy shipped : ShippedPolicies.read(file)) {
        String name =
            shipped.getMetadata().getName().replace("delayed-task-operator-", "monitoring-it-");
        client
            .admissionRegistration()
            .v1()
            .validatingAdmissionPolicies()
            .resource(
                new ValidatingAdmissionPolicyBuilder(shipped)
                    .editMetadata()
                    .withName(name)
                    .endMetadata()
                    .build())
            .createOr(existing -> existing.update());
        client
            .admissionRegistration()
            .v1()
            .validatingAdmissionPolicyBindings()
            .resource(
                new ValidatingAdmissionPolicyBindingBuilder()
                    .withNewMetadata()
                    .withName(name)
                    .endMetadata()
                    .withNewSpec()
                    .withPolicyName(name)
                    .withValidationActions("Deny")
                    .withNewMatchResources()
                    .withNewNamespaceSelector()
                    .addNewMatchExpression()
                    .withKey("kubernetes.io/metadata.name")
                    .withOperator("In")
                    .withValues(namespace)
                    .endMatchExpression()
                    .endNamespaceSelector()
                    .endMatchResources()
                    .endSpec()
                    .build())
            .createOr(existing -> existing.update());
        bindings.add(name);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return String.join(",", bindings);
  }

  private static String substitute(String expression) {
    String result = expression;
    for (Map.Entry<String, String> variable : GRAFANA_VARIABLES.entrySet()) {
      result = result.replace(variable.getKey(), variable.getValue());
    }
    return result;
  }

  private static Set<String> metricsOf(String expression) {
    Set<String> names = new TreeSet<>();
    Matcher m = METRIC.matcher(expression);
    while (m.find()) {
      names.add(m.group(1));
    }
    return names;
  }

  /** The first sample's value of an instant query, or -1 without one. */
  private static double value(String expression) {
    JsonNode result = prometheus.query(expression).path("data").path("result");
    return result.isEmpty() ? -1 : result.get(0).path("value").get(1).asDouble();
  }
}
