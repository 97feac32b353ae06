package io.delayedtask.operator.testing;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;

/**
 * The three promises every fault test checks, over every DelayedTask still present in a namespace:
 * it fired; it did not fire before its due time (by its own timestamps and by when the test saw the
 * effect); it fired once (one firedTime ever shown, one Job, one successful Job creation).
 *
 * <p>"Fired twice" and "fired early as the test saw it" come from the {@link FiringLedger}'s
 * watches, so the ledger must have been watching the whole time: a watch error, or a fired task or
 * Job the ledger never saw, is a violation, never a silent pass.
 */
public final class FiringInvariants {
  private FiringInvariants() {}

  /** Tasks in {@code namespace} that have not fired yet (no firedTime), by name. */
  public static List<String> notFiredYet(
      KubernetesClient client, String namespace, Collection<String> names) {
    List<String> waiting = new ArrayList<>();
    for (String name : names) {
      DelayedTask task =
          client.resources(DelayedTask.class).inNamespace(namespace).withName(name).get();
      if (task == null || task.getStatus() == null || task.getStatus().getFiredTime() == null) {
        waiting.add(name);
      }
    }
    return waiting;
  }

  /**
   * Asserts the three promises for the tasks {@code names}; lists every violation at once. {@code
   * api} is the mock API server whose recorded requests count the successful Job creations, or null
   * on a real API server, which records none (there, Job names are deterministic and a second
   * creation meets the server's own AlreadyExists, so the Jobs listed and seen by the ledger are
   * the count).
   */
  public static void assertFiredOnceNotEarly(
      KubernetesClient client,
      String namespace,
      Collection<String> names,
      FiringLedger ledger,
      MockApiServer api) {
    awaitLedger(client, namespace, names, ledger);
    List<String> violations = new ArrayList<>();
    ledger.watchErrors().forEach(error -> violations.add("the ledger is blind: " + error));
    Map<String, Integer> createdJobsByTaskUid =
        api == null ? null : successfulJobCreationsByTaskUid(api);
    List<Job> jobs = client.batch().v1().jobs().inNamespace(namespace).list().getItems();
    Map<String, Set<String>> firedTimes = ledger.firedTimesByTaskUid();
    Set<String> firedMoreThanOnce = ledger.firedMoreThanOnce();
    for (String name : names) {
      DelayedTask task =
          client.resources(DelayedTask.class).inNamespace(namespace).withName(name).get();
      if (task == null) {
        violations.add(name + ": gone");
        continue;
      }
      String uid = task.getMetadata().getUid();
      var status = task.getStatus();
      if (status == null || status.getFiredTime() == null || status.getDueTime() == null) {
        violations.add(
            name
                + ": not fired (status "
                + (status == null ? null : Serialization.asJson(status))
                + ")");
        continue;
      }
      Instant due = Instant.parse(status.getDueTime());
      Instant fired = Instant.parse(status.getFiredTime());
      if (task.getSpec().getRunAt() != null
          && !due.equals(
              Instant.parse(task.getSpec().getRunAt())
                  .truncatedTo(java.time.temporal.ChronoUnit.MILLIS))) {
        violations.add(
            name
                + ": dueTime "
                + status.getDueTime()
                + " is not runAt "
                + task.getSpec().getRunAt());
      }
      if (fired.isBefore(due)) {
        violations.add(
            name
                + ": fired early, firedTime "
                + status.getFiredTime()
                + " < dueTime "
                + status.getDueTime());
      }
      Set<String> seenFiredTimes = firedTimes.getOrDefault(uid, Set.of());
      if (seenFiredTimes.isEmpty()) {
        violations.add(name + ": the ledger never saw it fire (its watch is dead or behind)");
      }
      if (firedMoreThanOnce.contains(uid)) {
        violations.add(name + ": fired more than once, firedTimes seen " + seenFiredTimes);
      }
      Instant seenAt = ledger.firstFiredSeenAt().get(uid);
      if (seenAt != null && seenAt.isBefore(due)) {
        violations.add(
            name + ": the test saw it fired at " + seenAt + ", before its due time " + due);
      }
      if (task.getSpec().getJobTemplate() != null) {
        checkJobs(
            name, uid, due, status.getJobName(), jobs, ledger, createdJobsByTaskUid, violations);
      }
    }
    if (!violations.isEmpty()) {
      throw new AssertionError(
          violations.size()
              + " violation(s) of fired-once-not-early over "
              + names.size()
              + " tasks:\n  "
              + String.join("\n  ", violations.subList(0, Math.min(50, violations.size()))));
    }
  }

  private static void checkJobs(
      String name,
      String uid,
      Instant due,
      String jobName,
      List<Job> jobs,
      FiringLedger ledger,
      Map<String, Integer> createdJobsByTaskUid,
      List<String> violations) {
    List<Job> owned =
        jobs.stream()
            .filter(
                job ->
                    job.getMetadata().getLabels() != null
                        && uid.equals(job.getMetadata().getLabels().get("delayedtask.io/task-uid")))
            .toList();
    if (owned.size() != 1) {
      violations.add(
          name
              + ": "
              + owned.size()
              + " Jobs carry its uid: "
              + owned.stream().map(job -> job.getMetadata().getName()).toList());
    }
    for (Job job : owned) {
      Map<String, String> annotations = job.getMetadata().getAnnotations();
      if (!job.getMetadata().getName().equals(jobName)) {
        violations.add(
            name
                + ": status.jobName "
                + jobName
                + " but its Job is "
                + job.getMetadata().getName());
      }
      if (annotations == null
          || annotations.get("delayedtask.io/fired-time") == null
          || annotations.get("delayedtask.io/due-time") == null) {
        violations.add(
            name
                + ": Job "
                + job.getMetadata().getName()
                + " lacks the due-time/fired-time annotations");
        continue;
      }
      if (Instant.parse(annotations.get("delayedtask.io/fired-time")).isBefore(due)
          || !Instant.parse(annotations.get("delayedtask.io/due-time")).equals(due)) {
        violations.add(
            name
                + ": Job annotations due "
                + annotations.get("delayedtask.io/due-time")
                + " fired "
                + annotations.get("delayedtask.io/fired-time")
                + " against dueTime "
                + due);
      }
      boolean controlled =
          job.getMetadata().getOwnerReferences() != null
              && job.getMetadata().getOwnerReferences().stream()
                  .anyMatch(
                      ref -> Boolean.TRUE.equals(ref.getController()) && uid.equals(ref.getUid()));
      if (!controlled) {
        violations.add(
            name + ": Job " + job.getMetadata().getName() + " is not controlled by the task");
      }
    }
    long seen = ledger.jobsAdded().stream().filter(job -> uid.equals(job.taskUid())).count();
    if (seen != 1) {
      violations.add(name + ": the test saw " + seen + " Jobs appear for it");
    }
    ledger.jobsAdded().stream()
        .filter(job -> uid.equals(job.taskUid()) && job.seenAt().isBefore(due))
        .forEach(
            job ->
                violations.add(
                    name
                        + ": Job "
                        + job.name()
                        + " appeared at "
                        + job.seenAt()
                        + " before "
                        + due));
    if (createdJobsByTaskUid != null) {
      int created = createdJobsByTaskUid.getOrDefault(uid, 0);
      if (created != 1) {
        violations.add(name + ": the API server created " + created + " Jobs for it");
      }
    }
  }

  /**
   * The ledger's watches trail the API server by a moment: give them a few seconds to catch up with
   * what the statuses show. A dead watch never does, and the checks below then name it.
   */
  private static void awaitLedger(
      KubernetesClient client, String namespace, Collection<String> names, FiringLedger ledger) {
    try {
      Awaitility.await("the ledger saw every firing")
          .atMost(Duration.ofSeconds(10))
          .pollInterval(Duration.ofMillis(200))
          .until(
              () ->
                  ledger.watchErrors().isEmpty()
                      && ledgerCaughtUp(client, namespace, names, ledger));
    } catch (ConditionTimeoutException e) {
      // reported as violations
    }
  }

  /**
   * True once the ledger has seen the firedTime each named task shows now, and the Job of each that
   * has one: its watches trail the API server by a moment, so wait for this before asserting.
   */
  public static boolean ledgerCaughtUp(
      KubernetesClient client, String namespace, Collection<String> names, FiringLedger ledger) {
    Map<String, Set<String>> firedTimes = ledger.firedTimesByTaskUid();
    Set<String> jobsSeen = new java.util.HashSet<>();
    ledger.jobsAdded().forEach(job -> jobsSeen.add(job.name()));
    for (String name : names) {
      DelayedTask task =
          client.resources(DelayedTask.class).inNamespace(namespace).withName(name).get();
      if (task == null || task.getStatus() == null || task.getStatus().getFiredTime() == null) {
        continue;
      }
      if (!firedTimes
          .getOrDefault(task.getMetadata().getUid(), Set.of())
          .contains(task.getStatus().getFiredTime())) {
        return false;
      }
      if (task.getStatus().getJobName() != null
          && !jobsSeen.contains(task.getStatus().getJobName())) {
        return false;
      }
    }
    return true;
  }

  /** Successful Job POSTs, counted by the delayedtask.io/task-uid label in the request body. */
  public static Map<String, Integer> successfulJobCreationsByTaskUid(MockApiServer api) {
    Map<String, Integer> counts = new HashMap<>();
    for (ApiCall call :
        api.calls(call -> call.isJobCreation() && call.succeeded() && call.body() != null)) {
      Job job = Serialization.unmarshal(call.body(), Job.class);
      String uid =
          job.getMetadata().getLabels() == null
              ? null
              : job.getMetadata().getLabels().get("delayedtask.io/task-uid");
      counts.merge(String.valueOf(uid), 1, Integer::sum);
    }
    return counts;
  }
}
