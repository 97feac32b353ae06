package io.delayedtask.operator.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonClassDescription;
import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Required;
import java.util.Objects;

/** A standard Kubernetes condition (metav1.Condition), with the descriptions our CRD shows. */
@JsonClassDescription(
    "One condition of the task, as metav1.Condition: at most one per type (the list is a map "
        + "keyed by type).")
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonIgnoreProperties(ignoreUnknown = true) // fields of a newer metav1.Condition
public class Condition {
  public static final String SCHEDULED = "Scheduled";
  public static final String FIRED = "Fired";
  public static final String COMPLETE = "Complete";
  public static final String FAILED = "Failed";

  /**
   * The task is due and its queue holds it (QueuePaused, QueueMissing, RateLimited,
   * ConcurrencyLimited).
   */
  public static final String QUEUED = "Queued";

  /** kstatus: the task is in the state its spec asks for (scheduled, suspended, or done). */
  public static final String READY = "Ready";

  /** kstatus: work towards the spec is under way (its Job runs). */
  public static final String RECONCILING = "Reconciling";

  /** kstatus: the task will not get further by itself (Failed, Missed, Invalid). */
  public static final String STALLED = "Stalled";

  @Required // the key of the conditions map list
  @JsonPropertyDescription(
      "Scheduled, Queued, Fired, Complete, Failed, Ready, Reconciling or Stalled.")
  private String type;

  @JsonPropertyDescription("True, False or Unknown.")
  private String status;

  @JsonPropertyDescription("A CamelCase word for the last transition.")
  private String reason;

  @JsonPropertyDescription("A human sentence on the last transition.")
  private String message;

  @JsonPropertyDescription("When status last changed, RFC 3339.")
  private String lastTransitionTime;

  @JsonPropertyDescription("The metadata.generation this condition describes.")
  private Long observedGeneration;

  public Condition() {}

  public Condition(
      String type,
      String status,
      String reason,
      String message,
      String lastTransitionTime,
      Long observedGeneration) {
    this.type = type;
    this.status = status;
    this.reason = reason;
    this.message = message;
    this.lastTransitionTime = lastTransitionTime;
    this.observedGeneration = observedGeneration;
  }

  public String getType() {
    return type;
  }

  public void setType(String type) {
    this.type = type;
  }

  public String getStatus() {
    return status;
  }

  public void setStatus(String status) {
    this.status = status;
  }

  public String getReason() {
    return reason;
  }

  public void setReason(String reason) {
    this.reason = reason;
  }

  public String getMessage() {
    return message;
  }

  public void setMessage(String message) {
    this.message = message;
  }

  public String getLastTransitionTime() {
    return lastTransitionTime;
  }

  public void setLastTransitionTime(String lastTransitionTime) {
    this.lastTransitionTime = lastTransitionTime;
  }

  public Long getObservedGeneration() {
    return observedGeneration;
  }

  public void setObservedGeneration(Long observedGeneration) {
    this.observedGeneration = observedGeneration;
  }

  @Override
  public boolean equals(Object o) {
    if (this == o) {
      return true;
    }
    if (!(o instanceof Condition that)) {
      return false;
    }
    return Objects.equals(type, that.type)
        && Objects.equals(status, that.status)
        && Objects.equals(reason, that.reason)
        && Objects.equals(message, that.message)
        && Objects.equals(lastTransitionTime, that.lastTransitionTime)
        && Objects.equals(observedGeneration, that.observedGeneration);
  }

  @Override
  public int hashCode() {
    return Objects.hash(type, status, reason, message, lastTransitionTime, observedGeneration);
  }
}
