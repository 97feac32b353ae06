package io.delayedtask.operator.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import com.fasterxml.jackson.databind.annotation.JsonDeserialize;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * What the operator reports (docs/reference.md, "status"). Times are UTC with three fraction
 * digits.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonIgnoreProperties(ignoreUnknown = true) // a newer operator's fields
@JsonDeserialize(
    using =
        DelayedTaskStatusDeserializer.class) // a field of the wrong type is dropped, not a crash
public class DelayedTaskStatus {

  @JsonPropertyDescription(
      "Scheduled, Suspended, Running, Fired, Succeeded, Failed, Missed or Invalid.")
  private Phase phase;

  @JsonPropertyDescription(
      "The absolute due time the operator computed, UTC (2026-12-03T07:00:00.000Z).")
  private String dueTime;

  @JsonPropertyDescription("When the task fired, UTC, same format as dueTime.")
  private String firedTime;

  @JsonPropertyDescription("The Job the task created, in the task's namespace.")
  private String jobName;

  @JsonPropertyDescription(
      "One sentence on the current phase: why it is Invalid, Failed or Missed.")
  private String message;

  @JsonPropertyDescription("The metadata.generation this status describes.")
  private Long observedGeneration;

  @JsonPropertyDescription(
      "Sink tasks only: the URL the last delivery attempt was sent to (Knative's "
          + "status.sinkUri); for a Service or an Addressable, the URL it resolved to at that attempt.")
  private String sinkUri;

  @JsonPropertyDescription(
      "Sink tasks only: the attempts for the current due time, the last answer, the next "
          + "attempt while a retry waits, and whether the dead-letter sink took the event.")
  private DeliveryStatus delivery;

  @JsonPropertyDescription(
      "The last value of the annotation delayedtask.io/fire-now the operator acted on: fired "
          + "the task at once as if that were its due time, or, on a task that had fired already or with a value that is "
          + "not an RFC 3339 time, only recorded a Warning Event. The same value never acts twice.")
  private String fireNowHandled;

  @JsonPropertyDescription(
      "Standard conditions: Scheduled, Queued (due and held by its "
          + "DelayedTaskQueue), Fired, Complete, Failed, and Ready, Reconciling, Stalled as kstatus (Flux, Argo CD) "
          + "reads them.")
  private List<Condition> conditions = new ArrayList<>();

  @JsonPropertyDescription(
      "Tasks with a jobTemplate or a sink.audience: the operator's record that this "
          + "metadata.generation was written while the admission policy was in force (the generation and a "
          + "signature only the operator can make); a generation without it fires only if written after the "
          + "policy's current objects (reason NotAdmitted otherwise).")
  private String admission;

  /**
   * Fields present but unreadable (wrong type, unknown phase), dropped; not part of equals, never
   * serialized.
   */
  @JsonIgnore private List<String> unreadableFields = List.of();

  public Phase getPhase() {
    return phase;
  }

  public void setPhase(Phase phase) {
    this.phase = phase;
  }

  public String getDueTime() {
    return dueTime;
  }

  public void setDueTime(String dueTime) {
    this.dueTime = dueTime;
  }

  public String getFiredTime() {
    return firedTime;
  }

  public void setFiredTime(String firedTime) {
    this.firedTime = firedTime;
  }

  public String getJobName() {
    return jobName;
  }

  public void setJobName(String jobName) {
    this.jobName = jobName;
  }

  public String getMessage() {
    return message;
  }

  public void setMessage(String message) {
    this.message = message;
  }

  public Long getObservedGeneration() {
    return observedGeneration;
  }

  public void setObservedGeneration(Long observedGeneration) {
    this.observedGeneration = observedGeneration;
  }

  public String getAdmission() {
    return admission;
  }

  public void setAdmission(String admission) {
    this.admission = admission;
  }

  public String getSinkUri() {
    return sinkUri;
  }

  public void setSinkUri(String sinkUri) {
    this.sinkUri = sinkUri;
  }

  public DeliveryStatus getDelivery() {
    return delivery;
  }

  public void setDelivery(DeliveryStatus delivery) {
    this.delivery = delivery;
  }

  public String getFireNowHandled() {
    return fireNowHandled;
  }

  public void setFireNowHandled(String fireNowHandled) {
    this.fireNowHandled = fireNowHandled;
  }

  public List<Condition> getConditions() {
    return conditions;
  }

  public void setConditions(List<Condition> conditions) {
    this.conditions = conditions == null ? new ArrayList<>() : conditions;
  }

  /** The fields that were present but could not be read, one sentence each; usually empty. */
  public List<String> unreadableFields() {
    return unreadableFields;
  }

  void markUnreadable(List<String> problems) {
    this.unreadableFields = List.copyOf(problems);
  }

  @Override
  public boolean equals(Object o) {
    if (this == o) {
      return true;
    }
    if (!(o instanceof DelayedTaskStatus that)) {
      return false;
    }
    return phase == that.phase
        && Objects.equals(dueTime, that.dueTime)
        && Objects.equals(firedTime, that.firedTime)
        && Objects.equals(jobName, that.jobName)
        && Objects.equals(message, that.message)
        && Objects.equals(observedGeneration, that.observedGeneration)
        && Objects.equals(sinkUri, that.sinkUri)
        && Objects.equals(admission, that.admission)
        && Objects.equals(delivery, that.delivery)
        && Objects.equals(fireNowHandled, that.fireNowHandled)
        && Objects.equals(conditions, that.conditions);
  }

  @Override
  public int hashCode() {
    return Objects.hash(
        phase,
        dueTime,
        firedTime,
        jobName,
        message,
        observedGeneration,
        sinkUri,
        delivery,
        fireNowHandled,
        conditions,
        admission);
  }
}
