package io.delayedtask.operator.sandbox;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.DelayedTaskStatus;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import java.io.PrintStream;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Prints one line per phase change of any DelayedTask, with the fire lag (firedTime - dueTime) once
 * a task has fired: what a newcomer watches in the sandbox instead of {@code kubectl get -w}, which
 * the mock API server cannot serve.
 */
final class PhaseReporter implements ResourceEventHandler<DelayedTask> {
  /** The time of day, UTC, to the millisecond: every line the sandbox prints starts with it. */
  static final DateTimeFormatter CLOCK =
      DateTimeFormatter.ofPattern("HH:mm:ss.SSS").withZone(ZoneOffset.UTC);

  private final PrintStream out;
  private final Map<String, String> lastPhase = new ConcurrentHashMap<>();

  PhaseReporter(PrintStream out) {
    this.out = out;
  }

  @Override
  public void onAdd(DelayedTask task) {
    report(task, "created");
  }

  @Override
  public void onUpdate(DelayedTask oldTask, DelayedTask task) {
    report(task, null);
  }

  @Override
  public void onDelete(DelayedTask task, boolean deletedFinalStateUnknown) {
    lastPhase.remove(key(task));
    print(task, "deleted");
  }

  private void report(DelayedTask task, String event) {
    DelayedTaskStatus status = task.getStatus();
    String phase = status == null || status.getPhase() == null ? null : status.getPhase().name();
    String previous = phase == null ? lastPhase.get(key(task)) : lastPhase.put(key(task), phase);
    if (event != null) {
      print(task, event);
    }
    if (phase != null && !Objects.equals(previous, phase)) {
      print(task, describe(status));
    }
  }

  private static String describe(DelayedTaskStatus status) {
    StringBuilder line = new StringBuilder(status.getPhase().name());
    if (status.getDueTime() != null) {
      line.append("  due ").append(status.getDueTime());
    }
    if (status.getJobName() != null) {
      line.append("  job ").append(status.getJobName());
    }
    if (status.getFiredTime() != null && status.getDueTime() != null) {
      Duration lag =
          Duration.between(
              Instant.parse(status.getDueTime()), Instant.parse(status.getFiredTime()));
      line.append("  fire lag ").append(lag.toMillis()).append(" ms");
    }
    if (status.getMessage() != null) {
      line.append("  — ").append(status.getMessage());
    }
    return line.toString();
  }

  private void print(DelayedTask task, String what) {
    out.printf("%s  %-40s %s%n", LocalTime.now(ZoneOffset.UTC).format(CLOCK), key(task), what);
  }

  private static String key(DelayedTask task) {
    return task.getMetadata().getNamespace() + "/" + task.getMetadata().getName();
  }
}
