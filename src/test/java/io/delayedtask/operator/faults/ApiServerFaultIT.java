package io.delayedtask.operator.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.Phase;
import io.delayedtask.operator.task.job.TaskLabels;
import io.delayedtask.operator.testing.ApiCall;
import io.delayedtask.operator.testing.ApiFault;
import io.delayedtask.operator.testing.JobOutcomes;
import io.delayedtask.operator.testing.RequiresLoopbackOnlyNetwork;
import io.delayedtask.operator.testing.Tasks;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The API server misbehaves: throttling, conflicts, errors, and a Job name someone else took. */
@ExtendWith(FaultLabExtension.class)
@RequiresLoopbackOnlyNetwork
class ApiServerFaultIT {
  private static final String JOBS = "/apis/batch/v1/namespaces/[^/]+/jobs";
  private static final String STATUS =
      "/apis/delayedtask\\.io/v1alpha1/namespaces/[^/]+/delayedtasks/[^/]+/status";

  @Test
  void statusConvergesAndEachJobIsCreatedOnceThrough409And429And500(FaultLab lab) {
    lab.startOperator("op-a");
    lab.awaitLiveLeader(Duration.ofSeconds(60));
    // A burst of each on Job creation and on status writes (a PUT of the status subresource, the
    // one verb the operator writes it with: DESIGN.md), from before the tasks exist: the
    // reconciler's Scheduled status meets them too. Then the store answers again.
    List<ApiFault> faults = new ArrayList<>();
    for (int code : List.of(409, 429, 500)) {
      faults.add(lab.api.inject(ApiFault.of("POST", JOBS, code, 4)));
      faults.add(lab.api.inject(ApiFault.of("PUT", STATUS, code, 3)));
    }
    Instant due = Instant.now().plusSeconds(10);
    List<String> jobTasks = lab.createTasks("flaky-job", 15, i -> due.plusMillis(100L * i), true);
    List<String> statusTasks =
        lab.createTasks("flaky-status", 10, i -> due.plusMillis(50L + 100L * i), false);
    List<String> names = new ArrayList<>(jobTasks);
    names.addAll(statusTasks);

    lab.awaitAllFiredOnceNotEarly(names, Duration.ofSeconds(90));
    await("statuses converge")
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () -> {
              assertThat(jobTasks)
                  .allSatisfy(name -> assertThat(lab.phaseOf(name)).isEqualTo(Phase.Running));
              assertThat(statusTasks)
                  .allSatisfy(name -> assertThat(lab.phaseOf(name)).isEqualTo(Phase.Fired));
            });
    // The faults were met, not dodged: every injected response was served.
    assertThat(faults)
        .allSatisfy(
            fault -> assertThat(fault.usedUp()).as("%s hits of a burst", fault.hits()).isTrue());
  }

  /**
   * The dry run of a Job task's Job when it is scheduled: an answer without a verdict (503, 429,
   * every time, and the client's own retries off) never blocks scheduling, the task is Scheduled
   * long before its due time and its Job is created then; a refusal (403 from a policy webhook)
   * makes the task Invalid at once with the API server's message, and no Job is ever created.
   */
  @Test
  void aDryRunWithoutAVerdictSchedulesTheTaskAndARefusalMakesItInvalid(FaultLab lab) {
    lab.startOperator("op-a", java.util.Map.of("KUBERNETES_REQUEST_RETRY_BACKOFFLIMIT", "0"));
    lab.awaitLiveLeader(Duration.ofSeconds(60));
    ApiFault unavailable =
        lab.api.inject(
            ApiFault.of("POST", JOBS, 503, -1)
                .onDryRunsOnly()
                .whenBodyContains("\"delayedtask.io/task\":\"dry-503\""));
    ApiFault throttled =
        lab.api.inject(
            ApiFault.of("POST", JOBS, 429, -1)
                .onDryRunsOnly()
                .whenBodyContains("\"delayedtask.io/task\":\"dry-429\""));
    ApiFault webhook =
        lab.api.inject(
            ApiFault.of("POST", JOBS, 403, -1)
                .onDryRunsOnly()
                .whenBodyContains("\"delayedtask.io/task\":\"dry-403\"")
                .withMessage(
                    "admission webhook \"validate.kyverno.svc\" denied the request: images must come from "
                        + "registry.example.com"));
    Instant due = Instant.now().plusSeconds(20);
    lab.create(Tasks.withJob(FaultLab.NAMESPACE, "dry-503", due));
    lab.create(Tasks.withJob(FaultLab.NAMESPACE, "dry-429", due));
    lab.create(Tasks.withJob(FaultLab.NAMESPACE, "dry-403", due));

    await("scheduled, and refused, well before the due time")
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () -> {
              assertThat(lab.phaseOf("dry-503")).isEqualTo(Phase.Scheduled);
              assertThat(lab.phaseOf("dry-429")).isEqualTo(Phase.Scheduled);
              assertThat(lab.phaseOf("dry-403")).isEqualTo(Phase.Invalid);
            });
    assertThat(Instant.now()).isBefore(due);
    assertThat(lab.get("dry-403").getStatus().getMessage())
        .isEqualTo(
            "spec.jobTemplate is refused by the API server "
                + "(a dry run of the Job's creation): admission webhook 'validate.kyverno.svc' denied the request: images must "
                + "come from registry.example.com; fix spec.jobTemplate and apply the task again");
    assertThat(List.of(unavailable, throttled, webhook))
        .allSatisfy(
            fault ->
                assertThat(fault.hits()).as("one dry run per task and generation").isEqualTo(1));

    lab.awaitAllFiredOnceNotEarly(List.of("dry-503", "dry-429"), Duration.ofSeconds(60));
    await("Running")
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () -> {
              assertThat(lab.phaseOf("dry-503")).isEqualTo(Phase.Running);
              assertThat(lab.phaseOf("dry-429")).isEqualTo(Phase.Running);
            });
    assertThat(
            lab.api.calls(
                call ->
                    call.isJobCreation()
                        && call.body().contains("\"delayedtask.io/task\":\"dry-403\"")))
        .as("no Job for the refused task")
        .isEmpty();
    assertThat(lab.phaseOf("dry-403")).isEqualTo(Phase.Invalid);
  }

  /**
   * The client's request timeout, set the standard fabric8 way (the variable its Config reads, as
   * for any fabric8 client; the operator adds no setting of its own): 2 s instead of 10 s.
   */
  private static final Duration CLIENT_TIMEOUT = Duration.ofSeconds(2);

  /**
   * How long a hung request is held: shorter than the claim lease (30 s), and far past the client's
   * timeout: a retry before the hold ended proves the client abandoned the request, with room for
   * the retry to come ten times later than the 2 s timeout on a slow machine. Nothing waits for it.
   */
  private static final Duration HOLD = Duration.ofSeconds(25);

  @Test
  void aRequestThatHangsPastTheClientsTimeoutIsAbandonedAndRetried(FaultLab lab) {
    lab.startOperator(
        "op-a",
        java.util.Map.of("KUBERNETES_REQUEST_TIMEOUT", Long.toString(CLIENT_TIMEOUT.toMillis())));
    hangOnceThenFire(lab);
  }

  /**
   * The same when the client's own retries are used up (here: it has none), as after a hang longer
   * than all of them: a timeout is transient (docs/reference.md), so the operator retries, and does
   * not report the task Failed.
   */
  @Test
  void aRequestThatHangsPastTheClientsTimeoutAndRetriesIsRetriedByTheOperator(FaultLab lab) {
    lab.startOperator(
        "op-a",
        java.util.Map.of(
            "KUBERNETES_REQUEST_TIMEOUT",
            Long.toString(CLIENT_TIMEOUT.toMillis()),
            "KUBERNETES_REQUEST_RETRY_BACKOFFLIMIT",
            "0"));
    hangOnceThenFire(lab);
  }

  private static void hangOnceThenFire(FaultLab lab) {
    lab.awaitLiveLeader(Duration.ofSeconds(60));
    // One Job creation and one firing status write hang: no answer, nothing applied.
    ApiFault jobHang =
        lab.api.inject(
            ApiFault.hang("POST", JOBS, HOLD, 1)
                .whenBodyContains("\"delayedtask.io/task\":\"hang-job\""));
    ApiFault statusHang =
        lab.api.inject(
            ApiFault.hang("PUT", STATUS.replace("[^/]+/status", "hang-status/status"), HOLD, 1)
                .whenBodyContains("\"firedTime\""));
    Instant due = Instant.now().plusSeconds(3);
    lab.create(Tasks.withJob(FaultLab.NAMESPACE, "hang-job", due));
    lab.create(Tasks.statusOnly(FaultLab.NAMESPACE, "hang-status", due));

    lab.awaitAllFiredOnceNotEarly(List.of("hang-job", "hang-status"), Duration.ofSeconds(60));
    await("phases")
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () -> {
              assertThat(lab.phaseOf("hang-job")).isEqualTo(Phase.Running);
              assertThat(lab.phaseOf("hang-status")).isEqualTo(Phase.Fired);
            });
    assertThat(jobHang.hits()).as("Job creations held").isEqualTo(1);
    assertThat(statusHang.hits()).as("firing status writes held").isEqualTo(1);
    assertRetriedWhileHeld(
        lab,
        call ->
            call.isJobCreation()
                && call.body() != null
                && call.body().contains("\"delayedtask.io/task\":\"hang-job\""));
    assertRetriedWhileHeld(
        lab, call -> call.isStatusWrite() && call.path().contains("/delayedtasks/hang-status/"));
  }

  /**
   * The held request, then a second attempt that the API server answered with success: sent after
   * the client's timeout (the timeout ended the wait) and before the hold ended (the client did not
   * wait for the answer, it abandoned the request).
   */
  private static void assertRetriedWhileHeld(
      FaultLab lab, java.util.function.Predicate<ApiCall> request) {
    List<ApiCall> calls = lab.api.calls(request);
    ApiCall held = calls.stream().filter(ApiCall::injected).findFirst().orElseThrow();
    ApiCall retry =
        calls.stream()
            .filter(call -> call.at().isAfter(held.at()) && call.succeeded())
            .findFirst()
            .orElseThrow(
                () ->
                    new AssertionError(
                        "no successful attempt after the held " + held + ": " + calls));
    Duration after = Duration.between(held.at(), retry.at());
    assertThat(after)
        .as("the retry of %s %s, after the held one", retry.method(), retry.path())
        .isGreaterThanOrEqualTo(CLIENT_TIMEOUT.minusMillis(100))
        .isLessThan(HOLD);
  }

  /**
   * Issue 16, item 3, the whole way: the status write that records Running fails (held 6 s, room
   * for a slow machine to complete and delete the Job meanwhile, then a 409, which the client does
   * not retry), and meanwhile the Job completes and is deleted, as the TTL controller does with
   * {@code ttlSecondsAfterFinished: 0}. The firing decided again finds the Job in neither the cache
   * nor the API server; its delete notification's last state gives the outcome, and the Job is not
   * created a second time for the same due time.
   */
  private static final Duration HELD_WRITE = Duration.ofSeconds(6);

  @Test
  void aJobThatCompletesAndIsDeletedWhileItsFiringIsWrittenIsNotCreatedAgainAndGivesItsOutcome(
      FaultLab lab) {
    lab.startOperator("op-a");
    lab.awaitLiveLeader(Duration.ofSeconds(60));
    ApiFault lostWrite =
        lab.api.inject(
            ApiFault.of("PUT", STATUS.replace("[^/]+/status", "ttl-zero/status"), 409, 1)
                .whenBodyContains("\"phase\":\"Running\"")
                .delayed(HELD_WRITE));
    lab.create(Tasks.withJob(FaultLab.NAMESPACE, "ttl-zero", Instant.now().plusSeconds(3)));

    Job job =
        await("the Job is created")
            .atMost(Duration.ofSeconds(60))
            .pollInterval(Duration.ofMillis(20))
            .until(
                () ->
                    lab
                        .client()
                        .batch()
                        .v1()
                        .jobs()
                        .inNamespace(FaultLab.NAMESPACE)
                        .withLabel(TaskLabels.TASK, "ttl-zero")
                        .list()
                        .getItems()
                        .stream()
                        .findFirst(),
                Optional::isPresent)
            .orElseThrow();
    JobOutcomes.complete(lab.client(), job);
    lab.client()
        .batch()
        .v1()
        .jobs()
        .inNamespace(FaultLab.NAMESPACE)
        .withName(job.getMetadata().getName())
        .delete();
    Instant deleted = Instant.now();

    await("the outcome")
        .atMost(Duration.ofSeconds(60))
        .until(() -> lab.phaseOf("ttl-zero") == Phase.Succeeded);
    assertThat(lostWrite.usedUp()).as("the Running write failed").isTrue();
    ApiCall held =
        lab.api
            .calls(
                call ->
                    call.injected() && call.isStatusWrite() && call.path().contains("/ttl-zero/"))
            .get(0);
    assertThat(deleted)
        .as("the Job gone before the held Running write was answered")
        .isBefore(held.at().plus(HELD_WRITE));
    assertThat(lab.get("ttl-zero").getStatus().getJobName()).isEqualTo(job.getMetadata().getName());
    assertThat(
            lab.api.calls(
                call ->
                    call.isJobCreation()
                        && call.body() != null
                        && call.body().contains("\"delayedtask.io/task\":\"ttl-zero\"")))
        .as("Job creations for the one due time")
        .hasSize(1);
  }

  @Test
  void aForeignJobUnderTheTasksJobNameIsLeftAloneAndTheTaskFails(FaultLab lab) {
    lab.startOperator("op-a");
    lab.awaitLiveLeader(Duration.ofSeconds(60));
    // Someone else's Job appears under the very name the operator is about to create.
    lab.api.plantBeforeFirstCreation(
        "\"delayedtask.io/task\":\"squatted\"",
        body -> {
          Job theirs = Serialization.unmarshal(body, Job.class);
          theirs.getMetadata().setOwnerReferences(null);
          theirs.getMetadata().setLabels(java.util.Map.of("owner", "someone-else"));
          theirs.getMetadata().setAnnotations(java.util.Map.of("owner", "someone-else"));
          return Serialization.asJson(theirs);
        });
    lab.create(Tasks.withJob(FaultLab.NAMESPACE, "squatted", Instant.now().plusSeconds(3)));

    await("the task reports the name clash")
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(() -> assertThat(lab.phaseOf("squatted")).isEqualTo(Phase.Failed));
    DelayedTask task = lab.get("squatted");
    String jobName =
        lab.client().batch().v1().jobs().inNamespace(FaultLab.NAMESPACE).list().getItems().stream()
            .filter(job -> job.getMetadata().getName().startsWith("squatted-"))
            .findFirst()
            .orElseThrow()
            .getMetadata()
            .getName();
    assertThat(task.getStatus().getMessage())
        .contains(jobName)
        .containsIgnoringCase("not controlled");
    Job theirs =
        lab.client().batch().v1().jobs().inNamespace(FaultLab.NAMESPACE).withName(jobName).get();
    assertThat(theirs.getMetadata().getLabels()).containsEntry("owner", "someone-else");
    assertThat(theirs.getMetadata().getOwnerReferences()).isNullOrEmpty();
    assertThat(theirs.getMetadata().getDeletionTimestamp()).isNull();
    assertThat(lab.api.calls(call -> call.isJobCreation() && call.succeeded())).isEmpty();

    // A later task is not held up by the clash.
    Instant later = Instant.now().plusSeconds(2);
    List<String> after = lab.createTasks("after-clash", 3, i -> later, true);
    lab.awaitAllFiredOnceNotEarly(after, Duration.ofSeconds(60));
  }
}
