package io.delayedtask.operator.task.status;

import io.delayedtask.operator.api.v1alpha1.Condition;
import io.delayedtask.operator.api.v1alpha1.DelayedTaskStatus;
import io.delayedtask.operator.api.v1alpha1.DeliveryStatus;
import io.delayedtask.operator.task.time.Times;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** Status helpers: copying a status and setting conditions the Kubernetes way. */
public final class Conditions {
  private static final java.util.Set<String> KSTATUS_TYPES =
      java.util.Set.of(Condition.READY, Condition.RECONCILING, Condition.STALLED);

  private Conditions() {}

  /** A deep copy, so the desired status can be built and compared with the current one. */
  public static DelayedTaskStatus copy(DelayedTaskStatus status) {
    DelayedTaskStatus copy = new DelayedTaskStatus();
    if (status == null) {
      return copy;
    }
    copy.setPhase(status.getPhase());
    copy.setDueTime(status.getDueTime());
    copy.setFiredTime(status.getFiredTime());
    copy.setJobName(status.getJobName());
    copy.setMessage(status.getMessage());
    copy.setObservedGeneration(status.getObservedGeneration());
    copy.setSinkUri(status.getSinkUri());
    copy.setFireNowHandled(status.getFireNowHandled());
    copy.setAdmission(status.getAdmission());
    copy.setDelivery(
        status.getDelivery() == null ? null : new DeliveryStatus(status.getDelivery()));
    List<Condition> conditions = new ArrayList<>();
    java.util.Set<String> types = new java.util.HashSet<>();
    for (Condition c : status.getConditions()) {
      // The CRD keys conditions by type: a status with a typeless condition or two of one type
      // (written by hand, or before the list was a map) would be refused, so the copy, which is
      // what gets written back, keeps the first of each type (the one find() reads) and no other.
      if (c.getType() == null || !types.add(c.getType())) {
        continue;
      }
      conditions.add(
          new Condition(
              c.getType(),
              c.getStatus(),
              c.getReason(),
              c.getMessage(),
              c.getLastTransitionTime(),
              c.getObservedGeneration()));
    }
    copy.setConditions(conditions);
    return copy;
  }

  /**
   * Sets a condition; lastTransitionTime moves only when its status changes, so an unchanged
   * condition compares equal and causes no write.
   */
  public static void set(
      DelayedTaskStatus status,
      String type,
      boolean value,
      String reason,
      String message,
      Instant now,
      Long generation) {
    String newStatus = value ? "True" : "False";
    Optional<Condition> existing = find(status, type);
    String transition =
        existing
            .filter(c -> newStatus.equals(c.getStatus()))
            .map(Condition::getLastTransitionTime)
            .orElse(Times.format(now));
    Condition condition = new Condition(type, newStatus, reason, message, transition, generation);
    List<Condition> conditions = new ArrayList<>(status.getConditions());
    conditions.removeIf(c -> type.equals(c.getType()));
    conditions.add(condition);
    conditions.sort(java.util.Comparator.comparingInt(c -> order(c.getType())));
    status.setConditions(conditions);
  }

  public static void remove(DelayedTaskStatus status, String type) {
    List<Condition> conditions = new ArrayList<>(status.getConditions());
    conditions.removeIf(c -> type.equals(c.getType()));
    status.setConditions(conditions);
  }

  public static Optional<Condition> find(DelayedTaskStatus status, String type) {
    return status == null
        ? Optional.empty()
        : status.getConditions().stream().filter(c -> type.equals(c.getType())).findFirst();
  }

  /**
   * When the task reached its current phase: the latest transition of any condition but the kstatus
   * ones (Ready, Reconciling, Stalled), which an upgrade adds to tasks that finished long ago and
   * which must not restart their TTL.
   */
  public static Optional<Instant> lastTransition(DelayedTaskStatus status) {
    return status.getConditions().stream()
        .filter(c -> !KSTATUS_TYPES.contains(c.getType()))
        .map(c -> Times.parseOrNull(c.getLastTransitionTime()))
        .filter(java.util.Objects::nonNull)
        .max(Instant::compareTo);
  }

  private static int order(String type) {
    return switch (type) {
      case Condition.SCHEDULED -> 0;
      case Condition.FIRED -> 1;
      case Condition.COMPLETE -> 2;
      case Condition.FAILED -> 3;
      case Condition.READY -> 4;
      case Condition.RECONCILING -> 5;
      case Condition.STALLED -> 6;
      default -> 7;
    };
  }
}
