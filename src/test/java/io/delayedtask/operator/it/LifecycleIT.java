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
import io.delayedtask.operator.api.v1alpha1.Condition;
import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.Phase;
import io.delayedtask.operator.config.OperatorConfig;
import io.delayedtask.operator.leader.ScheduleIds;
import io.delayedtask.operator.schedule.RedisSchedule;
import io.delayedtask.operator.task.job.JobNames;
import io.delayedtask.operator.task.time.Times;
import io.delayedtask.operator.testing.Events;
import io.delayedtask.operator.testing.JobOutcomes;
import io.delayedtask.operator.testing.OperatorFixture;
import io.delayedtask.operator.testing.OperatorHttp;
import io.delayedtask.operator.testing.RealKubernetes;
import io.delayedtask.operator.testing.RealKubernetes.Kubectl;
import io.delayedtask.operator.testing.RedisProcess;
import io.delayedtask.operator.testing.RequiresRealKubernetes;
import io.delayedtask.operator.testing.TtlExpiry;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.NonDeletingOperation;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * The life cycle of a DelayedTask, end to end: the real operator (production wiring, leader
 * election on) against a real kube-apiserver + etcd and a real Redis. The API server validates
 * every write (schema, CEL, Job specs, Job status), enforces resourceVersions, and its watches
 * drive the operator; nothing re-reconciles on a timer, so a missing event handler fails here, and
 * the schedule resync runs at production's interval, so a reconcile that forgets its Redis entry
 * fails here too. The tests share one operator, and each has a namespace of its own, so one test's
 * leftovers cannot satisfy another's assertions, and they run side by side (the FLUSHALL is of a
 * Redis of its own test's operator).
 */
@RequiresRealKubernetes
@Execution(ExecutionMode.CONCURRENT)
class LifecycleIT {
  /** Only waits: room for a machine ten times slower than an idle one. */
  private static final Duration TIMEOUT = Duration.ofSeconds(60);

  /**
   * The TTL of the tests that watch one run out: longer than the lateness TtlExpiry allows (6 s),
   * so a TTL counted twice is seen late, not within the window.
   */
  private static final Duration TTL = Duration.ofSeconds(8);

  /** Each test's own namespace, by test method name; the one operator watches them all. */
  private static final Map<String, String> NAMESPACES = new HashMap<>();

  private static RedisProcess redis;
  private static RealKubernetes kube;
  private static KubernetesClient client;
  private static DelayedTaskOperator operator;
  private static RedisSchedule schedule;

  @BeforeAll
  static void start() {
    redis = RedisProcess.start();
    kube = RealKubernetes.shared();
    client = kube.client();
    Arrays.stream(LifecycleIT.class.getDeclaredMethods())
        .filter(m -> m.isAnnotationPresent(Test.class))
        .forEach(m -> NAMESPACES.put(m.getName(), kube.createNamespace("lifecycle")));
    String leaseNamespace = kube.createNamespace("lifecycle-lease");
    Map<String, String> env = OperatorFixture.env(redis, "lifecycle", "op-1");
    env.put(OperatorConfig.NAMESPACES, String.join(",", NAMESPACES.values()));
    env.put(OperatorConfig.LEASE_NAMESPACE, leaseNamespace);
    operator = OperatorFixture.start(env, kube.newClient());
    schedule = RedisSchedule.open(OperatorConfig.fromEnv(env));
    await().atMost(TIMEOUT).until(operator::isFiring);
    // The operator is fully up once it has reconciled a task.
    String anyNamespace = NAMESPACES.values().iterator().next();
    create(client, task(anyNamespace, "warm-up", s -> s.setRunAt("2099-01-01T00:00:00Z")));
    await()
        .atMost(TIMEOUT)
        .until(() -> phase(client, anyNamespace, "warm-up").orElse(null) == Phase.Scheduled);
  }

  /** This test's namespace. */
  private String ns;

  @BeforeEach
  void useOwnNamespace(TestInfo test) {
    ns = NAMESPACES.get(test.getTestMethod().orElseThrow().getName());
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
    create(
        client,
        task(
            ns,
            "status-only",
            s -> {
              s.setRunAt(runAt.toString());
              s.setPayload(Map.of("order", "42"));
            }));

    await()
        .atMost(TIMEOUT)
        .until(() -> phase(client, ns, "status-only").orElse(null) == Phase.Scheduled);
    DelayedTask scheduled = get(client, ns, "status-only");
    assertThat(scheduled.getStatus().getDueTime()).isEqualTo(Times.format(runAt));
    assertThat(scheduled.getStatus().getObservedGeneration())
        .isEqualTo(scheduled.getMetadata().getGeneration());
    assertThat(entry(scheduled)).contains(Instant.parse(Times.format(runAt)));

    await()
        .atMost(TIMEOUT)
        .until(() -> phase(client, ns, "status-only").orElse(null) == Phase.Fired);
    DelayedTask fired = get(client, ns, "status-only");
    assertThat(Instant.parse(fired.getStatus().getFiredTime()))
        .isAfterOrEqualTo(Instant.parse(Times.format(runAt)));
    assertThat(fired.getStatus().getFiredTime()).matches(".*\\.[0-9]{3}Z");
    assertThat(fired.getStatus().getJobName()).isNull();
    assertThat(fired.getStatus().getConditions())
        .anySatisfy(
            c -> {
              assertThat(c.getType()).isEqualTo("Fired");
              assertThat(c.getStatus()).isEqualTo("True");
            });
    assertThat(entry(fired)).isEmpty();
    assertThat(client.batch().v1().jobs().inNamespace(ns).list().getItems())
        .noneMatch(j -> j.getMetadata().getName().startsWith("status-only-"));
    await()
        .atMost(TIMEOUT)
        .untilAsserted(
            () ->
                assertThat(Events.reasons(client, ns, "status-only"))
                    .contains("Scheduled", "Fired"));
  }

  @Test
  void withJobTemplateItRunsTheJobAndSucceeds() {
    create(
        client,
        task(
            ns,
            "report",
            s -> {
              s.setDelay("1s");
              s.setJobTemplate(busyboxJob());
              s.setPayload(Map.of("order", "42"));
            }));

    await().atMost(TIMEOUT).until(() -> phase(client, ns, "report").orElse(null) == Phase.Running);
    DelayedTask running = get(client, ns, "report");
    String uid = running.getMetadata().getUid();
    Instant due = Instant.parse(running.getStatus().getDueTime());
    assertThat(due)
        .isEqualTo(Instant.parse(running.getMetadata().getCreationTimestamp()).plusSeconds(1));
    String jobName = JobNames.jobName("report", uid, due);
    assertThat(running.getStatus().getJobName()).isEqualTo(jobName);

    Job job = client.batch().v1().jobs().inNamespace(ns).withName(jobName).get();
    assertThat(job).isNotNull();
    assertThat(job.getMetadata().getOwnerReferences())
        .singleElement()
        .satisfies(
            ref -> {
              assertThat(ref.getUid()).isEqualTo(uid);
              assertThat(ref.getController()).isTrue();
              assertThat(ref.getKind()).isEqualTo("DelayedTask");
            });
    assertThat(job.getMetadata().getLabels())
        .containsEntry("team", "billing")
        .containsEntry("delayedtask.io/task", "report")
        .containsEntry("delayedtask.io/task-uid", uid);
    assertThat(job.getMetadata().getAnnotations())
        .containsEntry("owner", "ops@example.com")
        .containsEntry("delayedtask.io/payload.order", "42")
        .containsEntry("delayedtask.io/due-time", running.getStatus().getDueTime())
        .containsEntry("delayedtask.io/fired-time", running.getStatus().getFiredTime());
    assertThat(job.getSpec().getTemplate().getSpec().getContainers())
        .singleElement()
        .satisfies(c -> assertThat(c.getImage()).isEqualTo("busybox"));

    JobOutcomes.complete(client, job);
    await()
        .atMost(TIMEOUT)
        .until(() -> phase(client, ns, "report").orElse(null) == Phase.Succeeded);
    assertThat(get(client, ns, "report").getStatus().getConditions())
        .anySatisfy(c -> assertThat(c.getType() + "=" + c.getStatus()).isEqualTo("Complete=True"));
    await()
        .atMost(TIMEOUT)
        .untilAsserted(
            () ->
                assertThat(Events.reasons(client, ns, "report"))
                    .contains("Scheduled", "JobCreated"));
  }

  @Test
  void aFailedJobFailsTheTask() {
    create(
        client,
        task(
            ns,
            "flaky",
            s -> {
              s.setDelay("500ms");
              s.setJobTemplate(busyboxJob());
            }));
    await().atMost(TIMEOUT).until(() -> phase(client, ns, "flaky").orElse(null) == Phase.Running);
    Job job =
        client
            .batch()
            .v1()
            .jobs()
            .inNamespace(ns)
            .withName(get(client, ns, "flaky").getStatus().getJobName())
            .get();

    JobOutcomes.fail(client, job, "Job has reached the specified backoff limit");
    await().atMost(TIMEOUT).until(() -> phase(client, ns, "flaky").orElse(null) == Phase.Failed);
    assertThat(get(client, ns, "flaky").getStatus().getMessage()).contains("backoff limit");
  }

  @Test
  void aJobDeletedWhileRunningFailsTheTaskAndItsTtlStarts() {
    create(
        client,
        task(
            ns,
            "job-gone",
            s -> {
              s.setDelay("500ms");
              s.setJobTemplate(busyboxJob());
              s.setTtlSecondsAfterFinished(TTL.toSeconds());
            }));
    await()
        .atMost(TIMEOUT)
        .until(() -> phase(client, ns, "job-gone").orElse(null) == Phase.Running);
    String jobName = get(client, ns, "job-gone").getStatus().getJobName();

    client.batch().v1().jobs().inNamespace(ns).withName(jobName).delete();
    await().atMost(TIMEOUT).until(() -> phase(client, ns, "job-gone").orElse(null) == Phase.Failed);
    DelayedTask task = get(client, ns, "job-gone");
    assertThat(task.getStatus().getMessage())
        .isEqualTo(
            "Job "
                + jobName
                + " was deleted before its outcome was "
                + "recorded; change spec.runAt or spec.delay to run it again");
    assertThat(task.getStatus().getConditions())
        .anySatisfy(
            c ->
                assertThat(c.getType() + "=" + c.getStatus() + "/" + c.getReason())
                    .isEqualTo("Failed=True/JobGone"));
    await()
        .atMost(TIMEOUT)
        .untilAsserted(() -> assertThat(Events.reasons(client, ns, "job-gone")).contains("Failed"));
    // A finished phase: the TTL runs from it, and the task goes.
    TtlExpiry.assertDeletedWhenTtlRunsOut(client, ns, "job-gone", "Failed", TTL);
  }

  @Test
  void changingTheDueTimeMovesTheEntry() {
    create(client, task(ns, "moved", s -> s.setRunAt(Instant.now().plusSeconds(3600).toString())));
    await().atMost(TIMEOUT).until(() -> phase(client, ns, "moved").orElse(null) == Phase.Scheduled);
    DelayedTask task = get(client, ns, "moved");
    assertThat(entry(task)).contains(Instant.parse(task.getStatus().getDueTime()));

    double repairsBefore = OperatorFixture.resyncRepairs(operator);

    // Moved to another far time first: the entry must follow, with nothing firing to hide it.
    Instant later = Instant.now().plusSeconds(7200);
    editSpec(client, ns, "moved", s -> s.setRunAt(later.toString()));
    await()
        .atMost(TIMEOUT)
        .until(() -> entry(task).equals(Optional.of(Instant.parse(Times.format(later)))));
    Instant sooner = Instant.now().plusSeconds(1);
    editSpec(client, ns, "moved", s -> s.setRunAt(sooner.toString()));
    await().atMost(TIMEOUT).until(() -> phase(client, ns, "moved").orElse(null) == Phase.Fired);
    DelayedTask fired = get(client, ns, "moved");
    assertThat(fired.getStatus().getDueTime()).isEqualTo(Times.format(sooner));
    assertThat(Instant.parse(fired.getStatus().getFiredTime()))
        .isAfterOrEqualTo(Instant.parse(Times.format(sooner)));
    // The reconcile alone moved it: the resync (production's interval here) repaired nothing.
    assertThat(OperatorFixture.resyncRepairs(operator)).isEqualTo(repairsBefore);
  }

  @Test
  void suspendedTaskWaitsAndFiresAtOnceWhenResumed() {
    create(
        client,
        task(
            ns,
            "paused",
            s -> {
              s.setDelay("1s");
              s.setSuspend(true);
            }));
    await()
        .atMost(TIMEOUT)
        .until(() -> phase(client, ns, "paused").orElse(null) == Phase.Suspended);
    DelayedTask task = get(client, ns, "paused");
    assertThat(entry(task)).isEmpty();
    Instant due = Instant.parse(task.getStatus().getDueTime());
    // Until a second past its due time, every look finds it suspended and not fired (on a slow
    // machine that second may have passed already: then a few looks, still).
    Duration untilPastDue = Duration.between(Instant.now(), due.plusSeconds(1));
    Duration watched =
        untilPastDue.compareTo(Duration.ofMillis(500)) > 0 ? untilPastDue : Duration.ofMillis(500);
    await()
        .during(watched)
        .atMost(watched.plus(TIMEOUT))
        .untilAsserted(
            () -> {
              DelayedTask now = get(client, ns, "paused");
              assertThat(now.getStatus().getPhase()).isEqualTo(Phase.Suspended);
              assertThat(now.getStatus().getFiredTime()).isNull();
            });

    Instant resumedFrom = Instant.now();
    editSpec(client, ns, "paused", s -> s.setSuspend(false));
    Instant resumed = Instant.now();
    await().atMost(TIMEOUT).until(() -> phase(client, ns, "paused").orElse(null) == Phase.Fired);
    DelayedTask fired = get(client, ns, "paused");
    assertThat(fired.getStatus().getDueTime()).isEqualTo(Times.format(due));
    // Overdue when resumed, so it fires at once: not before the resume, and well before the 5 min
    // resync could have written it back (30 s: room for a machine ten times slower).
    assertThat(Instant.parse(fired.getStatus().getFiredTime()))
        .isAfterOrEqualTo(resumedFrom.truncatedTo(ChronoUnit.MILLIS))
        .isBeforeOrEqualTo(resumed.plusSeconds(30));
  }

  /**
   * The fire-now annotation reaches the reconciler without a new generation, fires a suspended Job
   * task at once with the Job named after the annotation's time, acts once per value, and a
   * malformed value on another task is a Warning and fires nothing.
   */
  @Test
  void theFireNowAnnotationFiresASuspendedTaskOnceAndAMalformedOneFiresNothing() {
    create(
        client,
        task(
            ns,
            "fire-now",
            s -> {
              s.setDelay("1h");
              s.setSuspend(true);
              s.setJobTemplate(busyboxJob());
            }));
    create(client, task(ns, "fire-bad", s -> s.setDelay("1h")));
    await()
        .atMost(TIMEOUT)
        .until(
            () ->
                phase(client, ns, "fire-now").orElse(null) == Phase.Suspended
                    && phase(client, ns, "fire-bad").orElse(null) == Phase.Scheduled);
    String at = Times.format(Instant.now());
    annotateFireNow("fire-now", at);
    annotateFireNow("fire-bad", "right now");

    await()
        .atMost(TIMEOUT)
        .until(() -> phase(client, ns, "fire-now").orElse(null) == Phase.Running);
    DelayedTask fired = get(client, ns, "fire-now");
    assertThat(fired.getStatus().getDueTime()).isEqualTo(at);
    assertThat(fired.getStatus().getFireNowHandled()).isEqualTo(at);
    assertThat(fired.getStatus().getJobName())
        .isEqualTo(JobNames.jobName("fire-now", fired.getMetadata().getUid(), Instant.parse(at)));
    assertThat(fired.getSpec().isSuspended()).isTrue();
    await()
        .atMost(TIMEOUT)
        .untilAsserted(
            () -> {
              assertThat(Events.reasons(client, ns, "fire-now")).contains("FireNow", "JobCreated");
              assertThat(Events.reasons(client, ns, "fire-bad")).contains("FireNowInvalid");
            });
    DelayedTask bad = get(client, ns, "fire-bad");
    assertThat(bad.getStatus().getPhase()).isEqualTo(Phase.Scheduled);
    assertThat(bad.getStatus().getFiredTime()).isNull();
    assertThat(
            client
                .batch()
                .v1()
                .jobs()
                .inNamespace(ns)
                .withLabel("delayedtask.io/task", "fire-now")
                .list()
                .getItems())
        .as("one Job for the one value")
        .hasSize(1);
  }

  private void annotateFireNow(String name, String value) {
    client
        .resources(DelayedTask.class)
        .inNamespace(ns)
        .withName(name)
        .edit(
            t -> {
              Map<String, String> annotations =
                  t.getMetadata().getAnnotations() == null
                      ? new HashMap<>()
                      : new HashMap<>(t.getMetadata().getAnnotations());
              annotations.put("delayedtask.io/fire-now", value);
              t.getMetadata().setAnnotations(annotations);
              return t;
            });
  }

  @Test
  void unsuspendedPastItsStartingDeadlineItIsMissed() {
    create(
        client,
        task(
            ns,
            "overslept",
            s -> {
              s.setDelay("1s");
              s.setStartingDeadlineSeconds(1L);
              s.setSuspend(true);
            }));
    await()
        .atMost(TIMEOUT)
        .until(() -> phase(client, ns, "overslept").orElse(null) == Phase.Suspended);
    Instant due = Instant.parse(get(client, ns, "overslept").getStatus().getDueTime());
    await().atMost(TIMEOUT.plusSeconds(3)).until(() -> Instant.now().isAfter(due.plusSeconds(2)));

    editSpec(client, ns, "overslept", s -> s.setSuspend(false));
    await()
        .atMost(TIMEOUT)
        .until(() -> phase(client, ns, "overslept").orElse(null) == Phase.Missed);
    DelayedTask missed = get(client, ns, "overslept");
    assertThat(missed.getStatus().getFiredTime()).isNull();
    assertThat(missed.getStatus().getMessage()).contains("startingDeadlineSeconds=1");
    assertThat(entry(missed)).isEmpty();
  }

  @Test
  void aRunAtChangedAfterFiringFiresAgain() {
    Instant first = Instant.now().plusSeconds(1);
    create(
        client,
        task(
            ns,
            "again",
            s -> {
              s.setRunAt(first.toString());
              s.setJobTemplate(busyboxJob());
            }));
    await().atMost(TIMEOUT).until(() -> phase(client, ns, "again").orElse(null) == Phase.Running);
    DelayedTask firstRun = get(client, ns, "again");
    JobOutcomes.complete(
        client,
        client
            .batch()
            .v1()
            .jobs()
            .inNamespace(ns)
            .withName(firstRun.getStatus().getJobName())
            .get());
    await().atMost(TIMEOUT).until(() -> phase(client, ns, "again").orElse(null) == Phase.Succeeded);

    Instant second = Instant.now().plusSeconds(2);
    editSpec(client, ns, "again", s -> s.setRunAt(second.toString()));
    await()
        .atMost(TIMEOUT)
        .untilAsserted(
            () -> {
              DelayedTask now = get(client, ns, "again");
              assertThat(now.getStatus().getPhase()).isEqualTo(Phase.Running);
              assertThat(now.getStatus().getDueTime()).isEqualTo(Times.format(second));
            });
    DelayedTask secondRun = get(client, ns, "again");
    assertThat(Instant.parse(secondRun.getStatus().getFiredTime()))
        .isAfterOrEqualTo(Instant.parse(Times.format(second)));
    assertThat(secondRun.getStatus().getJobName()).isNotEqualTo(firstRun.getStatus().getJobName());
    assertThat(jobsOf(secondRun))
        .extracting(job -> job.getMetadata().getName())
        .containsExactlyInAnyOrder(
            firstRun.getStatus().getJobName(), secondRun.getStatus().getJobName());
    await()
        .atMost(TIMEOUT)
        .untilAsserted(
            () -> assertThat(Events.count(client, ns, "again", "JobCreated")).isEqualTo(2));
  }

  @Test
  void deletingATaskRemovesItsEntry() {
    create(
        client, task(ns, "cancelled", s -> s.setRunAt(Instant.now().plusSeconds(3600).toString())));
    await()
        .atMost(TIMEOUT)
        .until(() -> phase(client, ns, "cancelled").orElse(null) == Phase.Scheduled);
    DelayedTask task = get(client, ns, "cancelled");
    assertThat(entry(task)).isPresent();

    client.resource(task).delete();
    await().atMost(TIMEOUT).until(() -> get(client, ns, "cancelled") == null);
    // The entry goes with the task's delete notification, which may come after the GET saw it gone.
    await().atMost(TIMEOUT).until(() -> entry(task).isEmpty());
  }

  @Test
  void pastItsStartingDeadlineItIsMissed() {
    create(
        client,
        task(
            ns,
            "late",
            s -> {
              s.setRunAt(Instant.now().minusSeconds(120).toString());
              s.setStartingDeadlineSeconds(30L);
              s.setJobTemplate(busyboxJob());
            }));
    await().atMost(TIMEOUT).until(() -> phase(client, ns, "late").orElse(null) == Phase.Missed);
    DelayedTask task = get(client, ns, "late");
    assertThat(task.getStatus().getMessage()).contains("startingDeadlineSeconds=30");
    assertThat(condition(task, "Ready"))
        .satisfies(
            ready -> {
              assertThat(ready.getStatus()).isEqualTo("False");
              assertThat(ready.getMessage()).startsWith("missed: " + task.getStatus().getMessage());
            });
    assertThat(task.getStatus().getJobName()).isNull();
    assertThat(client.batch().v1().jobs().inNamespace(ns).list().getItems())
        .noneMatch(j -> j.getMetadata().getName().startsWith("late-"));
    await()
        .atMost(TIMEOUT)
        .untilAsserted(() -> assertThat(Events.reasons(client, ns, "late")).contains("Missed"));
  }

  @Test
  void finishedTaskIsDeletedAfterItsTtl() {
    create(
        client,
        task(
            ns,
            "short-lived",
            s -> {
              s.setDelay("0s");
              s.setTtlSecondsAfterFinished(TTL.toSeconds());
            }));
    await()
        .atMost(TIMEOUT)
        .until(() -> phase(client, ns, "short-lived").orElse(null) == Phase.Fired);
    TtlExpiry.assertDeletedWhenTtlRunsOut(client, ns, "short-lived", "Fired", TTL);
  }

  @Test
  void badInputTheSchemaCannotSeeBecomesInvalidAndAValidTaskStillFires() {
    // The API server's CEL rules refuse malformed times and durations at admission
    // (CrdOnRealApiServerIT); what reaches the operator is what a schema cannot judge.
    create(
        client,
        task(
            ns,
            "bad-namespace",
            s -> {
              s.setDelay("1s");
              s.setJobTemplate(busyboxJob());
              s.getJobTemplate().getMetadata().setNamespace("kube-system");
            }));
    await()
        .atMost(TIMEOUT)
        .untilAsserted(
            () -> {
              DelayedTask read = get(client, ns, "bad-namespace");
              assertThat(read.getStatus()).isNotNull();
              assertThat(read.getStatus().getPhase()).isEqualTo(Phase.Invalid);
              assertThat(read.getStatus().getMessage())
                  .contains("spec.jobTemplate.metadata.namespace");
              assertThat(condition(read, "Ready"))
                  .satisfies(
                      ready -> {
                        assertThat(ready.getStatus()).isEqualTo("False");
                        assertThat(ready.getMessage())
                            .startsWith("invalid: " + read.getStatus().getMessage());
                      });
              assertThat(entry(read)).isEmpty();
            });
    await()
        .atMost(TIMEOUT)
        .untilAsserted(
            () -> assertThat(Events.reasons(client, ns, "bad-namespace")).contains("Invalid"));

    create(client, task(ns, "good-after-bad", s -> s.setDelay("500ms")));
    await()
        .atMost(TIMEOUT)
        .until(() -> phase(client, ns, "good-after-bad").orElse(null) == Phase.Fired);

    // Fixing the spec re-evaluates it.
    editSpec(client, ns, "bad-namespace", s -> s.getJobTemplate().getMetadata().setNamespace(null));
    await()
        .atMost(TIMEOUT)
        .until(() -> phase(client, ns, "bad-namespace").orElse(null) == Phase.Running);
    assertThat(get(client, ns, "bad-namespace").getStatus().getMessage()).isNull();
  }

  @Test
  void reapplyingAnUnchangedManifestAfterFiringFiresNothing() {
    DelayedTask manifest =
        task(
            ns,
            "gitops",
            s -> {
              s.setRunAt(Instant.now().plusSeconds(1).toString());
              s.setJobTemplate(busyboxJob());
            });
    create(client, manifest);
    await().atMost(TIMEOUT).until(() -> phase(client, ns, "gitops").orElse(null) == Phase.Running);
    DelayedTask fired = get(client, ns, "gitops");

    // GitOps re-applies the same manifest (plus a label): the object is replaced, the spec
    // unchanged.
    DelayedTask again =
        task(
            ns,
            "gitops",
            s -> {
              s.setRunAt(manifest.getSpec().getRunAt());
              s.setJobTemplate(busyboxJob());
            });
    again.getMetadata().setLabels(Map.of("applied", "again"));
    client.resource(again).createOr(NonDeletingOperation::update);
    await()
        .atMost(TIMEOUT)
        .until(() -> get(client, ns, "gitops").getMetadata().getLabels() != null);

    await()
        .during(Duration.ofSeconds(3))
        .atMost(Duration.ofSeconds(15))
        .untilAsserted(
            () -> {
              DelayedTask now = get(client, ns, "gitops");
              assertThat(now.getStatus().getPhase()).isEqualTo(Phase.Running);
              assertThat(now.getStatus().getFiredTime())
                  .isEqualTo(fired.getStatus().getFiredTime());
              assertThat(jobsOf(fired)).hasSize(1);
              assertThat(entry(now)).isEmpty();
            });
    assertThat(Events.count(client, ns, "gitops", "JobCreated")).isEqualTo(1);
  }

  @Test
  void aForeignJobWithTheSameNameFailsTheTaskAndIsLeftAlone() {
    create(
        client,
        task(
            ns,
            "squatted",
            s -> {
              s.setRunAt(Instant.now().plusSeconds(3600).toString());
              s.setJobTemplate(busyboxJob());
            }));
    await()
        .atMost(TIMEOUT)
        .until(() -> phase(client, ns, "squatted").orElse(null) == Phase.Scheduled);
    DelayedTask task = get(client, ns, "squatted");
    Instant soon = Instant.now().plusSeconds(2);
    String jobName =
        JobNames.jobName(
            "squatted", task.getMetadata().getUid(), Instant.parse(Times.format(soon)));
    client
        .batch()
        .v1()
        .jobs()
        .inNamespace(ns)
        .resource(
            new JobBuilder()
                .withNewMetadata()
                .withName(jobName)
                .addToLabels("owner", "someone-else")
                .endMetadata()
                .withSpec(busyboxJob().getSpec())
                .build())
        .create();

    editSpec(client, ns, "squatted", s -> s.setRunAt(soon.toString()));
    await().atMost(TIMEOUT).until(() -> phase(client, ns, "squatted").orElse(null) == Phase.Failed);
    assertThat(get(client, ns, "squatted").getStatus().getMessage())
        .contains(jobName)
        .contains("not controlled by this task");
    Job foreign = client.batch().v1().jobs().inNamespace(ns).withName(jobName).get();
    assertThat(foreign.getMetadata().getLabels()).containsEntry("owner", "someone-else");
    assertThat(foreign.getMetadata().getOwnerReferences()).isNullOrEmpty();
  }

  @Test
  void aJobTheApiServerWouldRefuseMakesTheTaskInvalidBeforeItIsDue() {
    // A container name the API server's Job validation refuses (422): the dry run of the Job's
    // creation when the task is scheduled finds it, so the task never fires and never waits for it.
    create(
        client,
        task(
            ns,
            "refused",
            s -> {
              s.setDelay("500ms");
              s.setJobTemplate(busyboxJob());
              s.getJobTemplate()
                  .getSpec()
                  .getTemplate()
                  .getSpec()
                  .getContainers()
                  .get(0)
                  .setName("Not_A_DNS_Label");
            }));
    await().atMost(TIMEOUT).until(() -> phase(client, ns, "refused").orElse(null) == Phase.Invalid);
    assertThat(get(client, ns, "refused").getStatus().getMessage())
        .contains("spec.jobTemplate is refused by the API server")
        .contains("Not_A_DNS_Label");
    assertThat(get(client, ns, "refused").getStatus().getFiredTime()).as("never fired").isNull();
    assertThat(client.batch().v1().jobs().inNamespace(ns).list().getItems())
        .noneMatch(j -> j.getMetadata().getName().startsWith("refused-"));
  }

  @Test
  void kubectlWaitGetWatchAndDescribeFollowATask() throws Exception {
    Kubectl kubectl = kube.kubectl(kube.kubeconfig());
    Process watch =
        kubectl.start(
            "get",
            "dt",
            "-n",
            ns,
            "--watch",
            "-o",
            "custom-columns=NAME:.metadata.name,PHASE:.status.phase",
            "--no-headers");
    try {
      create(client, task(ns, "watched", s -> s.setDelay("2s")));
      Kubectl.Result wait =
          kubectl.run(
              Duration.ofSeconds(40),
              null,
              "wait",
              "-n",
              ns,
              "--for=jsonpath={.status.phase}=Fired",
              "--timeout=30s",
              "dt/watched");
      assertThat(wait.ok()).as(wait.output()).isTrue();
      assertThat(wait.stdout()).contains("delayedtask.delayedtask.io/watched condition met");

      // The watch saw the task go through Scheduled to Fired.
      BufferedReader lines =
          new BufferedReader(new InputStreamReader(watch.getInputStream(), StandardCharsets.UTF_8));
      List<String> seen = new ArrayList<>();
      await()
          .atMost(TIMEOUT)
          .untilAsserted(
              () -> {
                while (lines.ready()) {
                  seen.add(lines.readLine().trim());
                }
                assertThat(seen).anyMatch(l -> l.matches("watched\\s+Fired"));
              });
      assertThat(seen).anyMatch(l -> l.matches("watched\\s+Scheduled"));
    } finally {
      watch.destroyForcibly();
    }

    Kubectl.Result describe = kubectl.run("describe", "dt", "-n", ns, "watched");
    assertThat(describe.ok()).as(describe.output()).isTrue();
    assertThat(describe.stdout())
        .contains("Events:")
        .containsPattern("Normal\\s+Scheduled")
        .containsPattern("Normal\\s+Fired");
  }

  @Test
  void flushAllIsHealedByTheResync() {
    // An operator of its own that opts in to a 1 s resync: the repair is this test's subject.
    try (OperatorFixture.OnRealKubernetes own =
            OperatorFixture.startOnRealKubernetes(kube, "flushall", OperatorFixture.SHORT_RESYNC);
        RedisSchedule ownSchedule =
            RedisSchedule.open(
                OperatorConfig.fromEnv(
                    Map.of(
                        OperatorConfig.REDIS_URI,
                        own.redis().uri(),
                        OperatorConfig.KEY_PREFIX,
                        "flushall")))) {
      // Due in an hour, so nothing but the resync can bring the entry back within the wait below.
      Instant runAt = Instant.now().plusSeconds(3600);
      create(client, task(own.namespace(), "survivor", s -> s.setRunAt(runAt.toString())));
      await()
          .atMost(TIMEOUT)
          .until(() -> phase(client, own.namespace(), "survivor").orElse(null) == Phase.Scheduled);
      String id = ScheduleIds.idOf(get(client, own.namespace(), "survivor"));
      assertThat(ownSchedule.waitingEntries()).containsKey(id);
      double repairsBefore = OperatorFixture.resyncRepairs(own.operator());

      RedisClient lettuce = RedisClient.create(own.redis().uri());
      try (StatefulRedisConnection<String, String> connection = lettuce.connect()) {
        connection.sync().flushall();
      } finally {
        lettuce.shutdown();
      }

      await().atMost(TIMEOUT).until(() -> ownSchedule.waitingEntries().containsKey(id));
      assertThat(ownSchedule.waitingEntries())
          .containsEntry(id, Instant.parse(Times.format(runAt)));
      assertThat(OperatorFixture.resyncRepairs(own.operator())).isGreaterThan(repairsBefore);
    }
  }

  @Test
  void servesMetricsHealthAndReadiness() {
    assertThat(scrape("/healthz")).isEqualTo("ok\n");
    await().atMost(TIMEOUT).until(() -> "ready\n".equals(scrape("/readyz")));
    // The series exist at 0 from the start: what proves the counting is each going up with a
    // firing.
    double firedBefore =
        OperatorHttp.metric(operator.httpPort(), "delayedtask_fired_total", "outcome=\"fired\"");
    double lagsBefore =
        OperatorHttp.metric(operator.httpPort(), "delayedtask_fire_lag_seconds_count", "");
    create(client, task(ns, "measured", s -> s.setDelay("0s")));
    await().atMost(TIMEOUT).until(() -> phase(client, ns, "measured").orElse(null) == Phase.Fired);
    await()
        .atMost(TIMEOUT)
        .untilAsserted(
            () -> {
              assertThat(
                      OperatorHttp.metric(
                          operator.httpPort(), "delayedtask_fired_total", "outcome=\"fired\""))
                  .as("delayedtask_fired_total{outcome=fired} after a firing")
                  .isGreaterThan(firedBefore);
              assertThat(
                      OperatorHttp.metric(
                          operator.httpPort(), "delayedtask_fire_lag_seconds_count", ""))
                  .as("a fire lag recorded")
                  .isGreaterThan(lagsBefore);
            });
    String metrics = scrape("/metrics");
    assertThat(metrics)
        .contains("delayedtask_fire_lag_seconds_bucket")
        .contains("delayedtask_due_times_total{outcome=\"fired\"}")
        .contains("delayedtask_schedule_waiting")
        .contains("delayedtask_schedule_in_flight")
        .contains("delayedtask_schedule_oldest_overdue_seconds")
        .contains("delayedtask_resync_repairs_total")
        .contains("operator_sdk_");
  }

  private static Optional<Instant> entry(DelayedTask task) {
    return Optional.ofNullable(schedule.waitingEntries().get(ScheduleIds.idOf(task)));
  }

  private List<Job> jobsOf(DelayedTask task) {
    return client
        .batch()
        .v1()
        .jobs()
        .inNamespace(ns)
        .withLabel("delayedtask.io/task-uid", task.getMetadata().getUid())
        .list()
        .getItems();
  }

  private static String scrape(String path) {
    return OperatorHttp.get(operator.httpPort(), path).body();
  }

  private static Condition condition(DelayedTask task, String type) {
    return task.getStatus().getConditions().stream()
        .filter(c -> type.equals(c.getType()))
        .findFirst()
        .orElseThrow(
            () ->
                new AssertionError(
                    "no " + type + " condition in " + task.getStatus().getConditions()));
  }
}
