package io.delayedtask.operator.testing;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * What the test saw happen, independently of the operator's own bookkeeping: every firedTime a
 * task's status ever showed, and every Job that appeared, with the wall-clock time the test saw it.
 * A task that fired twice shows two firedTimes or two Jobs here even if the second firing later
 * overwrote the first in the status.
 */
public final class FiringLedger implements AutoCloseable {
  /**
   * A Job as its ADDED event showed it: name, owning task uid (label), annotations, when the test
   * saw it.
   */
  public record SeenJob(
      String name,
      String taskUid,
      String dueTime,
      String firedTime,
      Instant seenAt,
      String controllerUid) {}

  private final FiredTimes firedTimes = new FiredTimes();

  /**
   * Every ADDED event, so a Job deleted and created again under its deterministic name counts
   * twice.
   */
  private final List<SeenJob> jobsAdded = new CopyOnWriteArrayList<>();

  private final List<String> watchErrors = new CopyOnWriteArrayList<>();
  private volatile boolean closing;
  private final Watch taskWatch;
  private final Watch jobWatch;

  public FiringLedger(KubernetesClient client, String namespace) {
    taskWatch =
        client
            .resources(DelayedTask.class)
            .inNamespace(namespace)
            .watch(
                new Watcher<>() {
                  @Override
                  public void eventReceived(Action action, DelayedTask task) {
                    firedTimes.record(task);
                  }

                  @Override
                  public void onClose(WatcherException cause) {
                    watchErrors.add("DelayedTask watch closed: " + cause);
                  }

                  @Override
                  public void onClose() {
                    closedQuietly("DelayedTask");
                  }
                });
    jobWatch =
        client
            .batch()
            .v1()
            .jobs()
            .inNamespace(namespace)
            .watch(
                new Watcher<>() {
                  @Override
                  public void eventReceived(Action action, Job job) {
                    if (action == Action.ADDED) {
                      Map<String, String> labels =
                          job.getMetadata().getLabels() == null
                              ? Map.of()
                              : job.getMetadata().getLabels();
                      Map<String, String> annotations =
                          job.getMetadata().getAnnotations() == null
                              ? Map.of()
                              : job.getMetadata().getAnnotations();
                      String controller =
                          job.getMetadata().getOwnerReferences() == null
                              ? null
                              : job.getMetadata().getOwnerReferences().stream()
                                  .filter(ref -> Boolean.TRUE.equals(ref.getController()))
                                  .map(ref -> ref.getUid())
                                  .findFirst()
                                  .orElse(null);
                      jobsAdded.add(
                          new SeenJob(
                              job.getMetadata().getName(),
                              labels.get("delayedtask.io/task-uid"),
                              annotations.get("delayedtask.io/due-time"),
                              annotations.get("delayedtask.io/fired-time"),
                              Instant.now(),
                              controller));
                    }
                  }

                  @Override
                  public void onClose(WatcherException cause) {
                    watchErrors.add("Job watch closed: " + cause);
                  }

                  @Override
                  public void onClose() {
                    closedQuietly("Job");
                  }
                });
  }

  /** Every distinct firedTime each task's status has shown, by task uid. */
  public Map<String, Set<String>> firedTimesByTaskUid() {
    return firedTimes.byTaskUid();
  }

  /** Uids of the tasks seen with more than one firedTime ({@link FiredTimes}' rule). */
  public Set<String> firedMoreThanOnce() {
    return firedTimes.firedMoreThanOnce();
  }

  /** When the test first saw a firedTime on the task. */
  public Map<String, Instant> firstFiredSeenAt() {
    return firedTimes.firstSeenAt();
  }

  /** Every Job creation the watch saw, in order: a name seen twice was created twice. */
  public List<SeenJob> jobsAdded() {
    return List.copyOf(jobsAdded);
  }

  /**
   * Why the ledger may have missed something: a watch that errored or closed before {@link
   * #close()}. A dead watch sees nothing, so while this is non-empty "fired twice" and "fired
   * early" cannot be checked; {@link FiringInvariants} fails on it.
   */
  public List<String> watchErrors() {
    return List.copyOf(watchErrors);
  }

  private void closedQuietly(String kind) {
    if (!closing) {
      watchErrors.add(kind + " watch closed before the ledger was");
    }
  }

  @Override
  public void close() {
    closing = true;
    taskWatch.close();
    jobWatch.close();
  }
}
