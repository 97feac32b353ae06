package io.delayedtask.operator.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import java.util.Objects;

/** How a sink task's delivery for its current due time went so far. */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonIgnoreProperties(ignoreUnknown = true)
public class DeliveryStatus {
  @JsonPropertyDescription(
      "Requests sent for this due time (to the sink, then to the dead-letter sink).")
  private Integer attempts;

  @JsonPropertyDescription(
      "Requests the sink got before its delivery failed for good; the attempts after them went to"
          + " the dead-letter sink. Absent while the sink is still tried.")
  private Integer sinkAttempts;

  @JsonPropertyDescription("When the last attempt was sent, UTC.")
  private String lastAttemptTime;

  @JsonPropertyDescription("When the next attempt is due, UTC, while a retry waits.")
  private String nextAttemptTime;

  @JsonPropertyDescription("The HTTP status code of the last attempt; absent when no answer came.")
  private Integer responseCode;

  @JsonPropertyDescription("True once the dead-letter sink took the event.")
  private Boolean deadLettered;

  public DeliveryStatus() {}

  public DeliveryStatus(DeliveryStatus other) {
    if (other != null) {
      attempts = other.attempts;
      sinkAttempts = other.sinkAttempts;
      lastAttemptTime = other.lastAttemptTime;
      nextAttemptTime = other.nextAttemptTime;
      responseCode = other.responseCode;
      deadLettered = other.deadLettered;
    }
  }

  public Integer getAttempts() {
    return attempts;
  }

  public void setAttempts(Integer attempts) {
    this.attempts = attempts;
  }

  public Integer getSinkAttempts() {
    return sinkAttempts;
  }

  public void setSinkAttempts(Integer sinkAttempts) {
    this.sinkAttempts = sinkAttempts;
  }

  public String getLastAttemptTime() {
    return lastAttemptTime;
  }

  public void setLastAttemptTime(String lastAttemptTime) {
    this.lastAttemptTime = lastAttemptTime;
  }

  public String getNextAttemptTime() {
    return nextAttemptTime;
  }

  public void setNextAttemptTime(String nextAttemptTime) {
    this.nextAttemptTime = nextAttemptTime;
  }

  public Integer getResponseCode() {
    return responseCode;
  }

  public void setResponseCode(Integer responseCode) {
    this.responseCode = responseCode;
  }

  public Boolean getDeadLettered() {
    return deadLettered;
  }

  public void setDeadLettered(Boolean deadLettered) {
    this.deadLettered = deadLettered;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof DeliveryStatus other
        && Objects.equals(attempts, other.attempts)
        && Objects.equals(sinkAttempts, other.sinkAttempts)
        && Objects.equals(lastAttemptTime, other.lastAttemptTime)
        && Objects.equals(nextAttemptTime, other.nextAttemptTime)
        && Objects.equals(responseCode, other.responseCode)
        && Objects.equals(deadLettered, other.deadLettered);
  }

  @Override
  public int hashCode() {
    return Objects.hash(
        attempts, sinkAttempts, lastAttemptTime, nextAttemptTime, responseCode, deadLettered);
  }
}
