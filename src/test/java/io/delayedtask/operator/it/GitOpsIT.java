package io.delayedtask.operator.it;

import static io.delayedtask.operator.testing.Tasks.create;
import static io.delayedtask.operator.testing.Tasks.get;
import static io.delayedtask.operator.testing.Tasks.phase;
import static io.delayedtask.operator.testing.Tasks.task;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.delayedtask.operator.DelayedTaskOperator;
import io.delayedtask.operator.api.v1alpha1.Condition;
import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.Phase;
import io.delayedtask.operator.config.OperatorConfig;
import io.delayedtask.operator.task.status.Conditions;
import io.delayedtask.operator.testing.OperatorFixture;
import io.delayedtask.operator.testing.RealKubernetes;
import io.delayedtask.operator.testing.RequiresRealKubernetes;
import io.delayedtask.operator.testing.TtlExpiry;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * What GitOps tools see and do. The kstatus conditions of the status, and finished tasks and their
 * TTL with a short operator-wide default DELAYEDTASK_FINISHED_TTL_SECONDS: unmarked tasks go on
 * time, a task's own TTL wins, and a task a GitOps tool manages is never deleted (its tool would
 * re-create it, and it would fire again). A task deleted and created again is a new task that fires
 * again, unless the operator-wide DELAYEDTASK_DEFAULT_STARTING_DEADLINE_SECONDS has passed. The
 * real operator against a real API server and a real Redis.
 *
 * <p>Each test has tasks of its own names, and most of its time is a TTL watched run out or not, so
 * the tests run side by side against the one operator.
 */
@RequiresRealKubernetes
@Execution(ExecutionMode.CONCURRENT)
class GitOpsIT {
  private static String NS;
  private static final Duration TIMEOUT = Duration.ofSeconds(20);

  /** The operator-wide default TTL here: long enough to watch a task before it goes. */
  private static final Duration DEFAULT_TTL = Duration.ofSeconds(3);

  /** The operator-wide default starting deadline here. */
  private static final Duration DEFAULT_DEADLINE = Duration.ofSeconds(60);

  /** Twice the default TTL: time enough for a wrong deletion. */
  private static final Duration KEPT_FOR = DEFAULT_TTL.multipliedBy(2);

  private static OperatorFixture.OnRealKubernetes world;
  private static RealKubernetes kube;
  private static KubernetesClient client;
  private static DelayedTaskOperator operator;

  @BeforeAll
  static void start() {
    kube = RealKubernetes.shared();
    client = kube.client();
    world =
        OperatorFixture.startOnRealKubernetes(
            kube,
            "finished-ttl",
            Map.of(
                OperatorConfig.FINISHED_TTL_SECONDS,
                Long.toString(DEFAULT_TTL.toSeconds()),
                OperatorConfig.DEFAULT_STARTING_DEADLINE_SECONDS,
                Long.toString(DEFAULT_DEADLINE.toSeconds())));
    NS = world.namespace();
    operator = world.operator();
  }

  @AfterAll
  static void stop() {
    if (world != null) {
      world.close();
    }
  }

  @Test
  void everyStatusCarriesReadyReconcilingAndStalledForTheGenerationSeen() {
    // Invalid for a reason the CRD's CEL cannot see (it checks a zone's shape, not that it exists).
    create(
        client,
        task(
            NS,
            "waits",
            s -> {
              s.setRunAt("2099-01-01T07:00:00");
              s.setTimeZone("Mars/Olympus_Mons");
            }));
    create(
        client,
        task(
            NS,
            "waits-in-berlin",
            s -> {
              s.setRunAt("2099-01-01T07:00:00");
              s.setTimeZone("Europe/Berlin");
            }));

    await().atMost(TIMEOUT).until(() -> phase(client, NS, "waits").orElse(null) == Phase.Invalid);
    await()
        .atMost(TIMEOUT)
        .until(() -> phase(client, NS, "waits-in-berlin").orElse(null) == Phase.Scheduled);

    DelayedTask invalid = get(client, NS, "waits");
    assertThat(conditionStatuses(invalid))
        .containsExactly("Scheduled=False", "Ready=False", "Reconciling=False", "Stalled=True");
    assertThat(readyMessage("waits")).contains("spec.timeZone", "Mars/Olympus_Mons");
    DelayedTask scheduled = get(client, NS, "waits-in-berlin");
    assertThat(scheduled.getStatus().getDueTime()).isEqualTo("2099-01-01T06:00:00.000Z");
    assertThat(conditionStatuses(scheduled))
        .containsExactly("Scheduled=True", "Ready=True", "Reconciling=False", "Stalled=False");
    for (DelayedTask task : new DelayedTask[] {invalid, scheduled}) {
      Long generation = task.getMetadata().getGeneration();
      assertThat(task.getStatus().getObservedGeneration()).isEqualTo(generation);
      assertThat(task.getStatus().getConditions())
          .allSatisfy(c -> assertThat(c.getObservedGeneration()).isEqualTo(generation));
    }
  }

  @Test
  void anUnmarkedTaskWithoutItsOwnTtlIsDeletedAfterTheOperatorDefault() {
    create(client, task(NS, "plain", s -> s.setDelay("0s")));
    await().atMost(TIMEOUT).until(() -> phase(client, NS, "plain").orElse(null) == Phase.Fired);
    TtlExpiry.assertDeletedWhenTtlRunsOut(client, NS, "plain", "Fired", DEFAULT_TTL);
  }

  @Test
  void aTasksOwnTtlWinsOverTheOperatorDefault() {
    create(
        client,
        task(
            NS,
            "own-ttl",
            s -> {
              s.setDelay("0s");
              s.setTtlSecondsAfterFinished(3600L);
            }));
    await().atMost(TIMEOUT).until(() -> phase(client, NS, "own-ttl").orElse(null) == Phase.Fired);

    await()
        .during(KEPT_FOR)
        .atMost(KEPT_FOR.plusSeconds(5))
        .until(() -> get(client, NS, "own-ttl") != null);
    assertThat(readyMessage("own-ttl")).doesNotContain("kept");
  }

  @Test
  void aTaskDeletedAndCreatedAgainFromTheSameManifestFiresAgain() {
    String runAt = Instant.now().minusSeconds(5).toString();
    Supplier<DelayedTask> manifest =
        () ->
            task(
                NS,
                "recreated",
                s -> {
                  s.setRunAt(runAt);
                  s.setTtlSecondsAfterFinished(3600L);
                });
    create(client, manifest.get());
    await().atMost(TIMEOUT).until(() -> phase(client, NS, "recreated").orElse(null) == Phase.Fired);
    DelayedTask first = get(client, NS, "recreated");

    client.resources(DelayedTask.class).inNamespace(NS).withName("recreated").delete();
    await().atMost(TIMEOUT).until(() -> get(client, NS, "recreated") == null);
    create(client, manifest.get());

    await().atMost(TIMEOUT).until(() -> phase(client, NS, "recreated").orElse(null) == Phase.Fired);
    DelayedTask second = get(client, NS, "recreated");
    assertThat(second.getMetadata().getUid())
        .as("a new task")
        .isNotEqualTo(first.getMetadata().getUid());
    assertThat(second.getStatus().getDueTime())
        .as("the same due time")
        .isEqualTo(first.getStatus().getDueTime());
    assertThat(Instant.parse(second.getStatus().getFiredTime()))
        .as("fired again, after the first firing")
        .isAfter(Instant.parse(first.getStatus().getFiredTime()));
  }

  @Test
  void aTaskCreatedLongAfterItsRunAtIsMissedUnderTheOperatorWideDefaultDeadline() {
    String longAgo = Instant.now().minus(DEFAULT_DEADLINE.multipliedBy(2)).toString();
    create(
        client,
        task(
            NS,
            "restored-late",
            s -> {
              s.setRunAt(longAgo);
              s.setTtlSecondsAfterFinished(3600L);
            }));
    create(
        client,
        task(
            NS,
            "restored-own-deadline",
            s -> {
              s.setRunAt(longAgo);
              s.setStartingDeadlineSeconds(3600L);
              s.setTtlSecondsAfterFinished(3600L);
            }));

    await()
        .atMost(TIMEOUT)
        .until(() -> phase(client, NS, "restored-late").orElse(null) == Phase.Missed);
    DelayedTask missed = get(client, NS, "restored-late");
    assertThat(missed.getStatus().getFiredTime()).as("nothing fired").isNull();
    assertThat(missed.getStatus().getMessage())
        .contains("startingDeadlineSeconds=" + DEFAULT_DEADLINE.toSeconds());
    await()
        .atMost(TIMEOUT)
        .until(() -> phase(client, NS, "restored-own-deadline").orElse(null) == Phase.Fired);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource({
    "argo,      annotation, argocd.argoproj.io/tracking-id,   Argo CD",
    "flux-ks,   label,      kustomize.toolkit.fluxcd.io/name, Flux",
    "flux-helm, label,      helm.toolkit.fluxcd.io/name,      Flux"
  })
  void aTaskAGitOpsToolManagesIsKeptWithReadyAndAnEventSayingWhy(
      String name, String kind, String mark, String tool) {
    DelayedTask marked = task(NS, name, s -> s.setDelay("0s"));
    if (kind.equals("annotation")) {
      marked
          .getMetadata()
          .setAnnotations(Map.of(mark, "shop:delayedtask.io/DelayedTask:gitops/" + name));
    } else {
      marked.getMetadata().setLabels(Map.of(mark, "shop"));
    }
    create(client, marked);
    String kept =
        "kept: managed by "
            + tool
            + " ("
            + mark
            + "); deleting it would make "
            + tool
            + " re-create it and fire it again";

    await().atMost(TIMEOUT).untilAsserted(() -> assertThat(readyMessage(name)).contains(kept));
    await()
        .during(KEPT_FOR)
        .atMost(KEPT_FOR.plusSeconds(5))
        .until(() -> get(client, NS, name) != null);

    DelayedTask task = get(client, NS, name);
    assertThat(task.getStatus().getPhase()).isEqualTo(Phase.Fired);
    assertThat(readyMessage(name)).startsWith("fired at ");
    assertThat(Conditions.find(task.getStatus(), Condition.READY).orElseThrow().getStatus())
        .isEqualTo("True");
    assertThat(ttlSkippedCount(name))
        .as("one TTLSkipped event, however often it is reconciled")
        .isEqualTo(1);
  }

  private static List<String> conditionStatuses(DelayedTask task) {
    return task.getStatus().getConditions().stream()
        .map(c -> c.getType() + "=" + c.getStatus())
        .toList();
  }

  private static String readyMessage(String name) {
    DelayedTask task = get(client, NS, name);
    return task == null
        ? "<deleted>"
        : Conditions.find(task.getStatus(), Condition.READY)
            .map(Condition::getMessage)
            .orElse("<no Ready condition>");
  }

  /** Counted through count, so it holds whether repeated events are aggregated or not. */
  private static int ttlSkippedCount(String name) {
    return client.v1().events().inNamespace(NS).list().getItems().stream()
        .filter(
            e -> name.equals(e.getInvolvedObject().getName()) && "TTLSkipped".equals(e.getReason()))
        .mapToInt(e -> e.getCount() == null ? 1 : e.getCount())
        .sum();
  }
}
