package io.delayedtask.operator.it;

import static io.delayedtask.operator.testing.Tasks.busyboxJob;
import static io.delayedtask.operator.testing.Tasks.create;
import static io.delayedtask.operator.testing.Tasks.editSpec;
import static io.delayedtask.operator.testing.Tasks.get;
import static io.delayedtask.operator.testing.Tasks.phase;
import static io.delayedtask.operator.testing.Tasks.task;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.delayedtask.operator.DelayedTaskOperator;
import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.Phase;
import io.delayedtask.operator.config.OperatorConfig;
import io.delayedtask.operator.schedule.RedisSchedule;
import io.delayedtask.operator.task.JobNames;
import io.delayedtask.operator.task.ScheduleIds;
import io.delayedtask.operator.task.Times;
import io.delayedtask.operator.testing.JobOutcomes;
import io.delayedtask.operator.testing.OperatorFixture;
import io.delayedtask.operator.testing.RealKubernetes.Kubectl;
import io.delayedtask.operator.testing.RealKubernetes;
import io.delayedtask.operator.testing.RedisProcess;
import io.delayedtask.operator.testing.RequiresRealKubernetes;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The life cycle of a DelayedTask, end to end: the real operator (production wiring, leader
 * election on) against a real kube-apiserver + etcd and a real Redis. The API server validates
 * every write (schema, CEL, Job specs, Job status), enforces resourceVersions, and its watches
 * drive the operator; nothing re-reconciles on a timer, so a missing event handler fails here.
 */
@RequiresRealKubernetes
class LifecycleIT {
  private static final Duration TIMEOUT = Duration.ofSeconds(20);

  private static String NS;
  private static RedisProcess redis;
  private static RealKubernetes kube;
  private static KubernetesClient client;
  private static DelayedTaskOperator operator;
  private static RedisSchedule schedule;

  @BeforeAll
  static void start() {
    redis = RedisProcess.start();
    kube = RealKubernetes.shared();
    NS = kube.createNamespace("lifecycle");
    client = kube.client();
    Map<String, String> env = OperatorFixture.env(redis, "lifecycle", "op-1");
    env.put(OperatorConfig.NAMESPACES, NS);
    env.put(OperatorConfig.LEASE_NAMESPACE, NS);
    operator = OperatorFixture.start(env, kube.newClient());
    schedule = RedisSchedule.open(OperatorConfig.fromEnv(env));
    await().atMost(TIMEOUT).until(operator::isFiring);
    // The operator is fully up once it has reconciled a task.
    create(client, task(NS, "warm-up", s -> s.setRunAt("2099-01-01T00:00:00Z")));
    await().atMost(TIMEOUT).until(() -> phase(client, NS, "warm-up").orElse(null) == Phase.Scheduled);
  }

  @AfterAll
  static void stop() {
    if (operator != null) {
      operator.close();
    }
    if (schedule != null) {
      schedule.close();
    }
    if (redis != null) {
      redis.close();
    }
  }

  @Test
  void withoutJobTemplateItIsScheduledThenFired() {
    Instant runAt = Instant.now().plusSeconds(4);
    create(client, task(NS, "status-only", s -> {
      s.setRunAt(runAt.toString());
      s.setPayload(Map.of("order", "42"));
    }));

    await().atMost(TIMEOUT).until(() -> phase(client, NS, "status-only").orElse(null) == Phase.Scheduled);
    DelayedTask scheduled = get(client, NS, "status-only");
    assertThat(scheduled.getStatus().getDueTime()).isEqualTo(Times.format(runAt));
    assertThat(scheduled.getStatus().getObservedGeneration()).isEqualTo(scheduled.getMetadata().getGeneration());
    assertThat(entry(scheduled)).contains(Instant.parse(Times.format(runAt)));

    await().atMost(TIMEOUT).until(() -> phase(client, NS, "status-only").orElse(null) == Phase.Fired);
    DelayedTask fired = get(client, NS, "status-only");
    assertThat(Instant.parse(fired.getStatus().getFiredTime())).isAfterOrEqualTo(Instant.parse(Times.format(runAt)));
    assertThat(fired.getStatus().getFiredTime()).matches(".*\\.[0-9]{3}Z");
    assertThat(fired.getStatus().getJobName()).isNull();
    assertThat(fired.getStatus().getConditions()).anySatisfy(c -> {
      assertThat(c.getType()).isEqualTo("Fired");
      assertThat(c.getStatus()).isEqualTo("True");
    });
    assertThat(entry(fired)).isEmpty();
    assertThat(client.batch().v1().jobs().inNamespace(NS).list().getItems())
        .noneMatch(j -> j.getMetadata().getName().startsWith("status-only-"));
    await().atMost(TIMEOUT).untilAsserted(() ->
        assertThat(reasons("status-only")).contains("Scheduled", "Fired"));
  }

  @Test
  void withJobTemplateItRunsTheJobAndSucceeds() {
    create(client, task(NS, "report", s -> {
      s.setDelay("1s");
      s.setJobTemplate(busyboxJob());
      s.setPayload(Map.of("order", "42"));
    }));

    await().atMost(TIMEOUT).until(() -> phase(client, NS, "report").orElse(null) == Phase.Running);
    DelayedTask running = get(client, NS, "report");
    String uid = running.getMetadata().getUid();
    Instant due = Instant.parse(running.getStatus().getDueTime());
    assertThat(due).isEqualTo(Instant.parse(running.getMetadata().getCreationTimestamp()).plusSeconds(1));
    String jobName = JobNames.jobName("report", uid, due);
    assertThat(running.getStatus().getJobName()).isEqualTo(jobName);

    Job job = client.batch().v1().jobs().inNamespace(NS).withName(jobName).get();
    assertThat(job).isNotNull();
    assertThat(job.getMetadata().getOwnerReferences()).singleElement().satisfies(ref -> {
      assertThat(ref.getUid()).isEqualTo(uid);
      assertThat(ref.getController()).isTrue();
      assertThat(ref.getKind()).isEqualTo("DelayedTask");
    });
    assertThat(job.getMetadata().getLabels()).containsEntry("team", "billing")
        .containsEntry("delayedtask.io/task", "report").containsEntry("delayedtask.io/task-uid", uid);
    assertThat(job.getMetadata().getAnnotations()).containsEntry("owner", "ops@example.com")
        .containsEntry("delayedtask.io/payload.order", "42")
        .containsEntry("delayedtask.io/due-time", running.getStatus().getDueTime())
        .containsEntry("delayedtask.io/fired-time", running.getStatus().getFiredTime());
    assertThat(job.getSpec().getTemplate().getSpec().getContainers()).singleElement()
        .satisfies(c -> assertThat(c.getImage()).isEqualTo("busybox"));

    JobOutcomes.complete(client, job);
    await().atMost(TIMEOUT).until(() -> phase(client, NS, "report").orElse(null) == Phase.Succeeded);
    assertThat(get(client, NS, "report").getStatus().getConditions())
        .anySatisfy(c -> assertThat(c.getType() + "=" + c.getStatus()).isEqualTo("Complete=True"));
    await().atMost(TIMEOUT).untilAsserted(() -> assertThat(reasons("report")).contains("Scheduled", "JobCreated"));
  }

  @Test
  void aFailedJobFailsTheTask() {
    create(client, task(NS, "flaky", s -> {
      s.setDelay("500ms");
      s.setJobTemplate(busyboxJob());
    }));
    await().atMost(TIMEOUT).until(() -> phase(client, NS, "flaky").orElse(null) == Phase.Running);
    Job job = client.batch().v1().jobs().inNamespace(NS).withName(get(client, NS, "flaky").getStatus().getJobName()).get();

    JobOutcomes.fail(client, job, "Job has reached the specified backoff limit");
    await().atMost(TIMEOUT).until(() -> phase(client, NS, "flaky").orElse(null) == Phase.Failed);
    assertThat(get(client, NS, "flaky").getStatus().getMessage()).contains("backoff limit");
  }

  @Test
  void aJobDeletedWhileRunningFailsTheTaskAndItsTtlStarts() {
    create(client, task(NS, "job-gone", s -> {
      s.setDelay("500ms");
      s.setJobTemplate(busyboxJob());
      s.setTtlSecondsAfterFinished(2L);
    }));
    await().atMost(TIMEOUT).until(() -> phase(client, NS, "job-gone").orElse(null) == Phase.Running);
    String jobName = get(client, NS, "job-gone").getStatus().getJobName();

    client.batch().v1().jobs().inNamespace(NS).withName(jobName).delete();
    await().atMost(TIMEOUT).until(() -> phase(client, NS, "job-gone").orElse(null) == Phase.Failed);
    Instant failed = Instant.now();
    DelayedTask task = get(client, NS, "job-gone");
    assertThat(task.getStatus().getMessage()).isEqualTo("Job " + jobName + " was deleted before its outcome was "
        + "recorded; change spec.runAt or spec.delay to run it again");
    assertThat(task.getStatus().getConditions())
        .anySatisfy(c -> assertThat(c.getType() + "=" + c.getStatus() + "/" + c.getReason())
            .isEqualTo("Failed=True/JobGone"));
    await().atMost(TIMEOUT).untilAsserted(() -> assertThat(reasons("job-gone")).contains("Failed"));
    // A finished phase: the TTL runs from here, and the task goes.
    await().atMost(TIMEOUT).until(() -> get(client, NS, "job-gone") == null);
    assertThat(Duration.between(failed, Instant.now())).isGreaterThanOrEqualTo(Duration.ofMillis(1000));
  }

  @Test
  void changingTheDueTimeMovesTheEntry() {
    create(client, task(NS, "moved", s -> s.setRunAt(Instant.now().plusSeconds(3600).toString())));
    await().atMost(TIMEOUT).until(() -> phase(client, NS, "moved").orElse(null) == Phase.Scheduled);
    DelayedTask task = get(client, NS, "moved");
    assertThat(entry(task)).contains(Instant.parse(task.getStatus().getDueTime()));

    Instant sooner = Instant.now().plusSeconds(1);
    editSpec(client, NS, "moved", s -> s.setRunAt(sooner.toString()));
    await().atMost(TIMEOUT).until(() -> phase(client, NS, "moved").orElse(null) == Phase.Fired);
    assertThat(get(client, NS, "moved").getStatus().getDueTime()).isEqualTo(Times.format(sooner));
  }

  @Test
  void suspendedTaskWaitsAndFiresAtOnceWhenResumed() {
    create(client, task(NS, "paused", s -> {
      s.setDelay("1s");
      s.setSuspend(true);
    }));
    await().atMost(TIMEOUT).until(() -> phase(client, NS, "paused").orElse(null) == Phase.Suspended);
    DelayedTask task = get(client, NS, "paused");
    assertThat(entry(task)).isEmpty();
    Instant due = Instant.parse(task.getStatus().getDueTime());
    // Past its due time it still does not fire.
    await().pollDelay(Duration.between(Instant.now(), due).plusSeconds(1).isNegative() ? Duration.ZERO
            : Duration.between(Instant.now(), due).plusSeconds(1))
        .atMost(TIMEOUT).until(() -> phase(client, NS, "paused").orElse(null) == Phase.Suspended);

    editSpec(client, NS, "paused", s -> s.setSuspend(false));
    await().atMost(TIMEOUT).until(() -> phase(client, NS, "paused").orElse(null) == Phase.Fired);
    assertThat(get(client, NS, "paused").getStatus().getDueTime()).isEqualTo(Times.format(due));
  }

  @Test
  void deletingATaskRemovesItsEntry() {
    create(client, task(NS, "cancelled", s -> s.setRunAt(Instant.now().plusSeconds(3600).toString())));
    await().atMost(TIMEOUT).until(() -> phase(client, NS, "cancelled").orElse(null) == Phase.Scheduled);
    DelayedTask task = get(client, NS, "cancelled");
    assertThat(entry(task)).isPresent();

    client.resource(task).delete();
    await().atMost(TIMEOUT).until(() -> get(client, NS, "cancelled") == null);
    assertThat(entry(task)).isEmpty();
  }

  @Test
  void pastItsStartingDeadlineItIsMissed() {
    create(client, task(NS, "late", s -> {
      s.setRunAt(Instant.now().minusSeconds(120).toString());
      s.setStartingDeadlineSeconds(30L);
      s.setJobTemplate(busyboxJob());
    }));
    await().atMost(TIMEOUT).until(() -> phase(client, NS, "late").orElse(null) == Phase.Missed);
    DelayedTask task = get(client, NS, "late");
    assertThat(task.getStatus().getMessage()).contains("startingDeadlineSeconds=30");
    assertThat(task.getStatus().getJobName()).isNull();
    assertThat(client.batch().v1().jobs().inNamespace(NS).list().getItems())
        .noneMatch(j -> j.getMetadata().getName().startsWith("late-"));
    await().atMost(TIMEOUT).untilAsserted(() -> assertThat(reasons("late")).contains("Missed"));
  }

  @Test
  void finishedTaskIsDeletedAfterItsTtl() {
    create(client, task(NS, "short-lived", s -> {
      s.setDelay("0s");
      s.setTtlSecondsAfterFinished(2L);
    }));
    await().atMost(TIMEOUT).until(() -> phase(client, NS, "short-lived").orElse(null) == Phase.Fired);
    Instant fired = Instant.now();
    await().atMost(TIMEOUT).until(() -> get(client, NS, "short-lived") == null);
    assertThat(Duration.between(fired, Instant.now())).isGreaterThanOrEqualTo(Duration.ofMillis(1000));
  }

  @Test
  void badInputTheSchemaCannotSeeBecomesInvalidAndAValidTaskStillFires() {
    // The API server's CEL rules refuse malformed times and durations at admission
    // (CrdOnRealApiServerIT); what reaches the operator is what a schema cannot judge.
    create(client, task(NS, "bad-namespace", s -> {
      s.setDelay("1s");
      s.setJobTemplate(busyboxJob());
      s.getJobTemplate().getMetadata().setNamespace("kube-system");
    }));
    await().atMost(TIMEOUT).untilAsserted(() -> {
      DelayedTask read = get(client, NS, "bad-namespace");
      assertThat(read.getStatus()).isNotNull();
      assertThat(read.getStatus().getPhase()).isEqualTo(Phase.Invalid);
      assertThat(read.getStatus().getMessage()).contains("spec.jobTemplate.metadata.namespace");
      assertThat(entry(read)).isEmpty();
    });
    await().atMost(TIMEOUT).untilAsserted(() -> assertThat(reasons("bad-namespace")).contains("Invalid"));

    create(client, task(NS, "good-after-bad", s -> s.setDelay("500ms")));
    await().atMost(TIMEOUT).until(() -> phase(client, NS, "good-after-bad").orElse(null) == Phase.Fired);

    // Fixing the spec re-evaluates it.
    editSpec(client, NS, "bad-namespace", s -> s.getJobTemplate().getMetadata().setNamespace(null));
    await().atMost(TIMEOUT).until(() -> phase(client, NS, "bad-namespace").orElse(null) == Phase.Running);
    assertThat(get(client, NS, "bad-namespace").getStatus().getMessage()).isNull();
  }

  @Test
  void reapplyingAnUnchangedManifestAfterFiringFiresNothing() {
    DelayedTask manifest = task(NS, "gitops", s -> {
      s.setRunAt(Instant.now().plusSeconds(1).toString());
      s.setJobTemplate(busyboxJob());
    });
    create(client, manifest);
    await().atMost(TIMEOUT).until(() -> phase(client, NS, "gitops").orElse(null) == Phase.Running);
    DelayedTask fired = get(client, NS, "gitops");

    // GitOps re-applies the same manifest (plus a label): the object is replaced, the spec unchanged.
    DelayedTask again = task(NS, "gitops", s -> {
      s.setRunAt(manifest.getSpec().getRunAt());
      s.setJobTemplate(busyboxJob());
    });
    again.getMetadata().setLabels(Map.of("applied", "again"));
    client.resource(again).createOr(io.fabric8.kubernetes.client.dsl.NonDeletingOperation::update);
    await().atMost(TIMEOUT).until(() -> get(client, NS, "gitops").getMetadata().getLabels() != null);

    await().during(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(6)).untilAsserted(() -> {
      DelayedTask now = get(client, NS, "gitops");
      assertThat(now.getStatus().getPhase()).isEqualTo(Phase.Running);
      assertThat(now.getStatus().getFiredTime()).isEqualTo(fired.getStatus().getFiredTime());
      assertThat(jobsOf(fired)).hasSize(1);
      assertThat(entry(now)).isEmpty();
    });
    assertThat(reasons("gitops").stream().filter("JobCreated"::equals)).hasSize(1);
  }

  @Test
  void aForeignJobWithTheSameNameFailsTheTaskAndIsLeftAlone() {
    create(client, task(NS, "squatted", s -> {
      s.setRunAt(Instant.now().plusSeconds(3600).toString());
      s.setJobTemplate(busyboxJob());
    }));
    await().atMost(TIMEOUT).until(() -> phase(client, NS, "squatted").orElse(null) == Phase.Scheduled);
    DelayedTask task = get(client, NS, "squatted");
    Instant soon = Instant.now().plusSeconds(2);
    String jobName = JobNames.jobName("squatted", task.getMetadata().getUid(), Instant.parse(Times.format(soon)));
    client.batch().v1().jobs().inNamespace(NS).resource(new JobBuilder()
        .withNewMetadata().withName(jobName).addToLabels("owner", "someone-else").endMetadata()
        .withSpec(busyboxJob().getSpec()).build()).create();

    editSpec(client, NS, "squatted", s -> s.setRunAt(soon.toString()));
    await().atMost(TIMEOUT).until(() -> phase(client, NS, "squatted").orElse(null) == Phase.Failed);
    assertThat(get(client, NS, "squatted").getStatus().getMessage())
        .contains(jobName).contains("not controlled by this task");
    Job foreign = client.batch().v1().jobs().inNamespace(NS).withName(jobName).get();
    assertThat(foreign.getMetadata().getLabels()).containsEntry("owner", "someone-else");
    assertThat(foreign.getMetadata().getOwnerReferences()).isNullOrEmpty();
  }

  @Test
  void aJobTheApiServerRefusesFailsTheTaskWithItsReason() {
    // A container name the API server's Job validation refuses (422), which the CRD's slim Job
    // schema lets through: a permanent error, reported with the API server's own words.
    create(client, task(NS, "refused", s -> {
      s.setDelay("500ms");
      s.setJobTemplate(busyboxJob());
      s.getJobTemplate().getSpec().getTemplate().getSpec().getContainers().get(0).setName("Not_A_DNS_Label");
    }));
    await().atMost(TIMEOUT).until(() -> phase(client, NS, "refused").orElse(null) == Phase.Failed);
    assertThat(get(client, NS, "refused").getStatus().getMessage())
        .contains("the API server refused Job").contains("Not_A_DNS_Label");
    assertThat(client.batch().v1().jobs().inNamespace(NS).list().getItems())
        .noneMatch(j -> j.getMetadata().getName().startsWith("refused-"));
  }

  @Test
  void kubectlWaitGetWatchAndDescribeFollowATask() throws Exception {
    Kubectl kubectl = kube.kubectl(kube.kubeconfig());
    Process watch = kubectl.start("get", "dt", "-n", NS, "--watch",
        "-o", "custom-columns=NAME:.metadata.name,PHASE:.status.phase", "--no-headers");
    try {
      create(client, task(NS, "watched", s -> s.setDelay("2s")));
      Kubectl.Result wait = kubectl.run(Duration.ofSeconds(40), null,
          "wait", "-n", NS, "--for=jsonpath={.status.phase}=Fired", "--timeout=30s", "dt/watched");
      assertThat(wait.ok()).as(wait.output()).isTrue();
      assertThat(wait.stdout()).contains("delayedtask.delayedtask.io/watched condition met");

      // The watch saw the task go through Scheduled to Fired.
      java.io.BufferedReader lines = new java.io.BufferedReader(
          new java.io.InputStreamReader(watch.getInputStream(), java.nio.charset.StandardCharsets.UTF_8));
      List<String> seen = new java.util.ArrayList<>();
      await().atMost(TIMEOUT).untilAsserted(() -> {
        while (lines.ready()) {
          seen.add(lines.readLine().trim());
        }
        assertThat(seen).anyMatch(l -> l.matches("watched\\s+Fired"));
      });
      assertThat(seen).anyMatch(l -> l.matches("watched\\s+Scheduled"));
    } finally {
      watch.destroyForcibly();
    }

    Kubectl.Result describe = kubectl.run("describe", "dt", "-n", NS, "watched");
    assertThat(describe.ok()).as(describe.output()).isTrue();
    assertThat(describe.stdout()).contains("Events:").containsPattern("Normal\\s+Scheduled")
        .containsPattern("Normal\\s+Fired");
  }

  @Test
  void flushAllIsHealedByTheResync() {
    Instant runAt = Instant.now().plusSeconds(4);
    create(client, task(NS, "survivor", s -> s.setRunAt(runAt.toString())));
    await().atMost(TIMEOUT).until(() -> phase(client, NS, "survivor").orElse(null) == Phase.Scheduled);
    DelayedTask task = get(client, NS, "survivor");
    assertThat(entry(task)).isPresent();

    RedisClient lettuce = RedisClient.create(redis.uri());
    try (StatefulRedisConnection<String, String> connection = lettuce.connect()) {
      connection.sync().flushall();
    } finally {
      lettuce.shutdown();
    }

    await().atMost(TIMEOUT).until(() -> entry(task).isPresent());
    assertThat(entry(task)).contains(Instant.parse(Times.format(runAt)));
    await().atMost(TIMEOUT).until(() -> phase(client, NS, "survivor").orElse(null) == Phase.Fired);
    // Healed by the resync (every second here): tasks are not re-reconciled on a timer, so nothing
    // else writes the entry again. ScheduleResyncIT checks the resync's repairs one by one.
  }

  @Test
  void servesMetricsHealthAndReadiness() {
    assertThat(scrape("/healthz")).isEqualTo("ok\n");
    await().atMost(TIMEOUT).until(() -> "ready\n".equals(scrape("/readyz")));
    create(client, task(NS, "measured", s -> s.setDelay("0s")));
    await().atMost(TIMEOUT).until(() -> phase(client, NS, "measured").orElse(null) == Phase.Fired);
    String metrics = scrape("/metrics");
    assertThat(metrics)
        .contains("delayedtask_fire_lag_seconds_bucket")
        .contains("delayedtask_fired_total{outcome=\"fired\"}")
        .contains("delayedtask_schedule_waiting")
        .contains("delayedtask_schedule_in_flight")
        .contains("delayedtask_schedule_oldest_overdue_seconds")
        .contains("delayedtask_resync_repairs_total")
        .contains("operator_sdk_");
  }

  private static Optional<Instant> entry(DelayedTask task) {
    return Optional.ofNullable(schedule.waitingEntries().get(ScheduleIds.idOf(task)));
  }

  private static List<Job> jobsOf(DelayedTask task) {
    return client.batch().v1().jobs().inNamespace(NS).withLabel("delayedtask.io/task-uid", task.getMetadata().getUid())
        .list().getItems();
  }

  private static List<String> reasons(String taskName) {
    return client.v1().events().inNamespace(NS).list().getItems().stream()
        .filter(e -> taskName.equals(e.getInvolvedObject().getName()))
        .map(Event::getReason)
        .toList();
  }

  private static String scrape(String path) {
    try {
      HttpResponse<String> response = HttpClient.newHttpClient().send(
          HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + operator.httpPort() + path)).build(),
          HttpResponse.BodyHandlers.ofString());
      return response.body();
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }
}
