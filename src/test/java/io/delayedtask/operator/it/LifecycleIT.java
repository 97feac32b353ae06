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
import io.delayedtask.operator.fire.JobNames;
import io.delayedtask.operator.reconcile.ScheduleIds;
import io.delayedtask.operator.reconcile.Times;
import io.delayedtask.operator.schedule.RedisSchedule;
import io.delayedtask.operator.testing.MockKubernetes;
import io.delayedtask.operator.testing.OperatorFixture;
import io.delayedtask.operator.testing.RedisProcess;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.JobConditionBuilder;
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
 * election on) against the mock API server in CRUD mode and a real Redis.
 */
class LifecycleIT {
  private static final String NS = "tasks";
  private static final Duration TIMEOUT = Duration.ofSeconds(20);

  private static RedisProcess redis;
  private static MockKubernetes kube;
  private static KubernetesClient client;
  private static DelayedTaskOperator operator;
  private static RedisSchedule schedule;

  @BeforeAll
  static void start() {
    redis = RedisProcess.start();
    kube = MockKubernetes.start();
    client = kube.client();
    Map<String, String> env = OperatorFixture.env(redis, "lifecycle", "op-1");
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
    if (kube != null) {
      kube.close();
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

    finishJob(job, "Complete", null);
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

    finishJob(job, "Failed", "Job has reached the specified backoff limit");
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
  void aJobCreatedBeforeALostStatusWriteIsRunningEvenPastTheDeadline() {
    Instant runAt = Instant.now().plusSeconds(3);
    create(client, task(NS, "lost-write", s -> {
      s.setRunAt(runAt.toString());
      s.setStartingDeadlineSeconds(1L);
      s.setJobTemplate(busyboxJob());
    }));
    await().atMost(TIMEOUT).until(() -> phase(client, NS, "lost-write").orElse(null) == Phase.Scheduled);
    // From now on the status writes fail for a while: the Job gets created, the first attempts to
    // record Running do not, and the retries come after startingDeadlineSeconds.
    kube.server().expect().put().withPath("/apis/delayedtask.io/v1alpha1/namespaces/" + NS + "/delayedtasks/lost-write/status")
        .andReturn(409, new StatusBuilder().withCode(409).withReason("Conflict")
            .withMessage("Operation cannot be fulfilled: please apply your changes to the latest version").build())
        .times(3);

    await().atMost(TIMEOUT).until(() -> phase(client, NS, "lost-write").filter(p -> p != Phase.Scheduled).isPresent());
    DelayedTask task = get(client, NS, "lost-write");
    assertThat(task.getStatus().getPhase()).isEqualTo(Phase.Running);
    List<Job> jobs = jobsOf(task);
    assertThat(jobs).singleElement().satisfies(job -> {
      assertThat(job.getMetadata().getName()).isEqualTo(task.getStatus().getJobName());
      assertThat(job.getMetadata().getAnnotations()).containsEntry("delayedtask.io/fired-time",
          task.getStatus().getFiredTime());
    });
    assertThat(reasons("lost-write")).doesNotContain("Missed").containsOnlyOnce("JobCreated");
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
  void badInputBecomesInvalidAndAValidTaskStillFires() {
    Map<String, DelayedTask> bad = Map.of(
        "neither", task(NS, "bad-neither", s -> {}),
        "both", task(NS, "bad-both", s -> {
          s.setRunAt("2026-12-03T07:00:00Z");
          s.setDelay("1m");
        }),
        "time", task(NS, "bad-time", s -> s.setRunAt("next tuesday")),
        "duration", task(NS, "bad-duration", s -> s.setDelay("ten minutes")),
        "negative", task(NS, "bad-negative", s -> s.setDelay("-5m")),
        "namespace", task(NS, "bad-namespace", s -> {
          s.setDelay("1s");
          s.setJobTemplate(busyboxJob());
          s.getJobTemplate().getMetadata().setNamespace("kube-system");
        }));
    Map<String, String> expected = Map.of(
        "neither", "neither spec.runAt nor spec.delay",
        "both", "spec.runAt and spec.delay are both set",
        "time", "spec.runAt 'next tuesday'",
        "duration", "spec.delay 'ten minutes'",
        "negative", "is negative",
        "namespace", "spec.jobTemplate.metadata.namespace");
    bad.values().forEach(t -> create(client, t));

    bad.forEach((kind, t) -> await(kind).atMost(TIMEOUT).untilAsserted(() -> {
      DelayedTask read = get(client, NS, t.getMetadata().getName());
      assertThat(read.getStatus()).isNotNull();
      assertThat(read.getStatus().getPhase()).isEqualTo(Phase.Invalid);
      assertThat(read.getStatus().getMessage()).contains(expected.get(kind));
      assertThat(entry(read)).isEmpty();
    }));
    await().atMost(TIMEOUT).untilAsserted(() -> assertThat(reasons("bad-time")).contains("Invalid"));

    create(client, task(NS, "good-after-bad", s -> s.setDelay("500ms")));
    await().atMost(TIMEOUT).until(() -> phase(client, NS, "good-after-bad").orElse(null) == Phase.Fired);

    // Fixing the spec re-evaluates it.
    editSpec(client, NS, "bad-time", s -> s.setRunAt(Instant.now().plusSeconds(1).toString()));
    await().atMost(TIMEOUT).until(() -> phase(client, NS, "bad-time").orElse(null) == Phase.Fired);
    assertThat(get(client, NS, "bad-time").getStatus().getMessage()).isNull();
  }

  @Test
  void aFieldThisVersionDoesNotKnowIsIgnoredAndTheTaskFires() {
    // A newer CRD applied before the operator is upgraded; the mock, like a CRD without pruning, keeps the fields.
    createRaw("from-newer-crd", """
        {"delay":"500ms","timeZone":"Europe/Berlin","somethingNew":{"nested":[1,2]}}""");
    await().atMost(TIMEOUT).until(() -> phase(client, NS, "from-newer-crd").orElse(null) == Phase.Fired);
    assertThat(client.genericKubernetesResources("delayedtask.io/v1alpha1", "DelayedTask").inNamespace(NS)
        .withName("from-newer-crd").get().getAdditionalProperties().get("spec").toString()).contains("somethingNew");
  }

  @Test
  void aTaskTheOperatorCannotReadIsInvalidNamingTheFieldAndOthersStillFire() {
    // Wrong types, which only an API server without the CRD's schema lets through.
    createRaw("unreadable-suspend", """
        {"delay":"500ms","suspend":"yes-please"}""");
    createRaw("unreadable-payload", """
        {"delay":"500ms","payload":5}""");
    Map<String, String> expected = Map.of(
        "unreadable-suspend", "spec.suspend must be true or false, not \"yes-please\"",
        "unreadable-payload", "spec.payload must be a map of string values, not 5");

    expected.forEach((name, message) -> await(name).atMost(TIMEOUT).untilAsserted(() -> {
      DelayedTask read = get(client, NS, name);
      assertThat(read.getStatus()).isNotNull();
      assertThat(read.getStatus().getPhase()).isEqualTo(Phase.Invalid);
      assertThat(read.getStatus().getMessage()).contains(message);
    }));
    await().atMost(TIMEOUT).untilAsserted(() -> assertThat(reasons("unreadable-suspend")).contains("Invalid"));

    create(client, task(NS, "good-after-unreadable", s -> s.setDelay("500ms")));
    await().atMost(TIMEOUT).until(() -> phase(client, NS, "good-after-unreadable").orElse(null) == Phase.Fired);
    // Writing the status left the stored spec alone: still Invalid, nothing fired.
    assertThat(phase(client, NS, "unreadable-suspend")).contains(Phase.Invalid);
    assertThat(client.genericKubernetesResources("delayedtask.io/v1alpha1", "DelayedTask").inNamespace(NS)
        .withName("unreadable-suspend").get().getAdditionalProperties().get("spec").toString()).contains("yes-please");
  }

  @Test
  void anUnreadableTaskWhoseStatusCannotBeWrittenIsReportedByAnEvent() {
    kube.server().expect().put().withPath("/apis/delayedtask.io/v1alpha1/namespaces/" + NS
            + "/delayedtasks/unwritable/status")
        .andReturn(422, new StatusBuilder().withCode(422).withReason("Invalid")
            .withMessage("DelayedTask.delayedtask.io \"unwritable\" is invalid: status: refused").build())
        .always();
    createRaw("unwritable", """
        {"delay":"500ms","payload":5}""");

    await().atMost(TIMEOUT).untilAsserted(() -> assertThat(client.v1().events().inNamespace(NS).list().getItems())
        .filteredOn(e -> "unwritable".equals(e.getInvolvedObject().getName()))
        .singleElement().satisfies(e -> {
          assertThat(e.getReason()).isEqualTo("Invalid");
          assertThat(e.getType()).isEqualTo("Warning");
          assertThat(e.getMessage()).contains("spec.payload must be a map of string values, not 5")
              .contains("the status could not be written").contains("status: refused");
        }));
    assertThat(get(client, NS, "unwritable").getStatus()).isNull();
  }

  /** Creates a task from a raw spec, past the typed classes (as kubectl would send it). */
  private static void createRaw(String name, String specJson) {
    client.genericKubernetesResources("delayedtask.io/v1alpha1", "DelayedTask").inNamespace(NS)
        .resource(io.fabric8.kubernetes.client.utils.Serialization.unmarshal("""
            {"apiVersion":"delayedtask.io/v1alpha1","kind":"DelayedTask",
             "metadata":{"name":"%s","namespace":"%s"},"spec":%s}""".formatted(name, NS, specJson),
            io.fabric8.kubernetes.api.model.GenericKubernetesResource.class))
        .create();
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
    kube.server().expect().post().withPath("/apis/batch/v1/namespaces/locked/jobs")
        .andReturn(403, new StatusBuilder().withCode(403).withReason("Forbidden")
            .withMessage("jobs.batch is forbidden: User \"system:serviceaccount:ops:dto\" cannot create resource "
                + "\"jobs\" in API group \"batch\" in the namespace \"locked\"").build())
        .always();
    create(client, task("locked", "refused", s -> {
      s.setDelay("500ms");
      s.setJobTemplate(busyboxJob());
    }));
    await().atMost(TIMEOUT).until(() -> phase(client, "locked", "refused").orElse(null) == Phase.Failed);
    assertThat(get(client, "locked", "refused").getStatus().getMessage())
        .contains("cannot create resource \"jobs\"");
  }

  @Test
  void transientApiErrorsAreRetriedUntilTheJobIsCreated() {
    kube.server().expect().post().withPath("/apis/batch/v1/namespaces/busy/jobs")
        // The client itself retries 5xx; a conflict reaches the firer, which must retry with backoff.
        .andReturn(409, new StatusBuilder().withCode(409).withReason("Conflict")
            .withMessage("Operation cannot be fulfilled: please apply your changes to the latest version").build())
        .times(2);
    create(client, task("busy", "persistent", s -> {
      s.setDelay("500ms");
      s.setJobTemplate(busyboxJob());
    }));
    await().atMost(TIMEOUT).until(() -> phase(client, "busy", "persistent").orElse(null) == Phase.Running);
    DelayedTask task = get(client, "busy", "persistent");
    assertThat(client.batch().v1().jobs().inNamespace("busy").withName(task.getStatus().getJobName()).get()).isNotNull();
    assertThat(scrape("/metrics")).containsPattern("delayedtask_fired_total\\{outcome=\"retry\"} [2-9]");
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
    // Healed by the resync or by the periodic reconciliation (both run every second here);
    // ScheduleResyncIT checks the resync's repairs one by one.
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

  private static void finishJob(Job job, String type, String message) {
    job.setStatus(new io.fabric8.kubernetes.api.model.batch.v1.JobStatusBuilder()
        .withConditions(new JobConditionBuilder().withType(type).withStatus("True").withMessage(message)
            .withReason(type.equals("Failed") ? "BackoffLimitExceeded" : null).build())
        .build());
    client.batch().v1().jobs().inNamespace(NS).resource(job).updateStatus();
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
