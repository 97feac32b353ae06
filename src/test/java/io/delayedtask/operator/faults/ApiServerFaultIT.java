package io.delayedtask.operator.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.Phase;
import io.delayedtask.operator.testing.ApiFault;
import io.delayedtask.operator.testing.Tasks;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The API server misbehaves: throttling, conflicts, errors, and a Job name someone else took. */
@ExtendWith(FaultLabExtension.class)
class ApiServerFaultIT {
  private static final String JOBS = "/apis/batch/v1/namespaces/[^/]+/jobs";
  private static final String STATUS = "/apis/delayedtask\\.io/v1alpha1/namespaces/[^/]+/delayedtasks/[^/]+/status";
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
    List<String> statusTasks = lab.createTasks("flaky-status", 10, i -> due.plusMillis(50L + 100L * i), false);
    List<String> names = new ArrayList<>(jobTasks);
    names.addAll(statusTasks);

    lab.awaitAllFiredOnceNotEarly(names, Duration.ofSeconds(90));
    await("statuses converge").atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
      assertThat(jobTasks).allSatisfy(name -> assertThat(lab.phaseOf(name)).isEqualTo(Phase.Running));
      assertThat(statusTasks).allSatisfy(name -> assertThat(lab.phaseOf(name)).isEqualTo(Phase.Fired));
    });
    // The faults were met, not dodged: every injected response was served.
    assertThat(faults).allSatisfy(fault -> assertThat(fault.usedUp()).as("%s hits of a burst", fault.hits()).isTrue());
  }

  @Test
  void aForeignJobUnderTheTasksJobNameIsLeftAloneAndTheTaskFails(FaultLab lab) {
    lab.startOperator("op-a");
    lab.awaitLiveLeader(Duration.ofSeconds(60));
    // Someone else's Job appears under the very name the operator is about to create.
    lab.api.plantBeforeFirstCreation("\"delayedtask.io/task\":\"squatted\"", body -> {
      Job theirs = Serialization.unmarshal(body, Job.class);
      theirs.getMetadata().setOwnerReferences(null);
      theirs.getMetadata().setLabels(java.util.Map.of("owner", "someone-else"));
      theirs.getMetadata().setAnnotations(java.util.Map.of("owner", "someone-else"));
      return Serialization.asJson(theirs);
    });
    lab.create(Tasks.withJob(FaultLab.NAMESPACE, "squatted", Instant.now().plusSeconds(3)));

    await("the task reports the name clash").atMost(Duration.ofSeconds(60))
        .untilAsserted(() -> assertThat(lab.phaseOf("squatted")).isEqualTo(Phase.Failed));
    DelayedTask task = lab.get("squatted");
    String jobName = lab.client().batch().v1().jobs().inNamespace(FaultLab.NAMESPACE).list().getItems().stream()
        .filter(job -> job.getMetadata().getName().startsWith("squatted-")).findFirst().orElseThrow()
        .getMetadata().getName();
    assertThat(task.getStatus().getMessage()).contains(jobName).containsIgnoringCase("not controlled");
    Job theirs = lab.client().batch().v1().jobs().inNamespace(FaultLab.NAMESPACE).withName(jobName).get();
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
