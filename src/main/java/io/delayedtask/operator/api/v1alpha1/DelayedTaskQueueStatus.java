package io.delayedtask.operator.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/** What the operator reports of a queue; written at most once per 5 s per queue, never per task. */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonIgnoreProperties(ignoreUnknown = true) // a newer operator's fields
public class DelayedTaskQueueStatus {
  /** Condition type: the queue is paused (True) or not (False). */
  public static final String PAUSED = "Paused";

  @JsonPropertyDescription("Tasks of the queue scheduled and not yet due.")
  private Long pending;

  @JsonPropertyDescription(
      "Tasks of the queue due and held by it (paused, rate or concurrency limit).")
  private Long waiting;

  @JsonPropertyDescription(
      "Dispatches of the queue in flight: Jobs created and not finished, sink requests not "
          + "answered.")
  private Long inFlight;

  @JsonPropertyDescription(
      "The due time of the task that has waited longest, UTC (2026-12-03T07:00:00.000Z); "
          + "absent when none waits.")
  private String oldestWaitingDueTime;

  @JsonPropertyDescription(
      "Dispatches of the queue's tasks since the queue's counters began: Jobs created, "
          + "status-only firings and delivery attempts.")
  private Long dispatchedTotal;

  @JsonPropertyDescription("The metadata.generation this status describes.")
  private Long observedGeneration;

  @JsonPropertyDescription(
      "Standard conditions: Ready (the operator applies the queue's spec) and Paused, as "
          + "kstatus (Flux, Argo CD) reads them.")
  private List<Condition> conditions = new ArrayList<>();

  public Long getPending() {
    return pending;
  }

  public void setPending(Long pending) {
    this.pending = pending;
  }

  public Long getWaiting() {
    return waiting;
  }

  public void setWaiting(Long waiting) {
    this.waiting = waiting;
  }

  public Long getInFlight() {
    return inFlight;
  }

  public void setInFlight(Long inFlight) {
    this.inFlight = inFlight;
  }

  public String getOldestWaitingDueTime() {
    return oldestWaitingDueTime;
  }

  public void setOldestWaitingDueTime(String oldestWaitingDueTime) {
    this.oldestWaitingDueTime = oldestWaitingDueTime;
  }

  public Long getDispatchedTotal() {
    return dispatchedTotal;
  }

  public void setDispatchedTotal(Long dispatchedTotal) {
    this.dispatchedTotal = dispatchedTotal;
  }

  public Long getObservedGeneration() {
    return observedGeneration;
  }

  public void setObservedGeneration(Long observedGeneration) {
    this.observedGeneration = observedGeneration;
  }

  public List<Condition> getConditions() {
    return conditions;
  }

  public void setConditions(List<Condition> conditions) {
    this.conditions = conditions == null ? new ArrayList<>() : conditions;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof DelayedTaskQueueStatus that
        && Objects.equals(pending, that.pending)
        && Objects.equals(waiting, that.waiting)
        && Objects.equals(inFlight, that.inFlight)
        && Objects.equals(oldestWaitingDueTime, that.oldestWaitingDueTime)
        && Objects.equals(dispatchedTotal, that.dispatchedTotal)
        && Objects.equals(observedGeneration, that.observedGeneration)
        && Objects.equals(conditions, that.conditions);
  }

  @Override
  public int hashCode() {
    return Objects.hash(
        pending,
        waiting,
        inFlight,
        oldestWaitingDueTime,
        dispatchedTotal,
        observedGeneration,
        conditions);
  }
}
