package io.delayedtask.operator.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;

/** How a sink delivery is retried (Knative's DeliverySpec). Every field is optional. */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonIgnoreProperties(ignoreUnknown = true)
@ValidationRule(
    value = "!has(self.deadLetterSink) || !has(self.deadLetterSink.audience)",
    message = "spec.delivery.deadLetterSink takes no audience; remove it")
public class DeliverySpec {
  public static final int DEFAULT_RETRY = 3;
  public static final int MAX_RETRY = 100;

  /**
   * The shortest backoffDelay: a zero wait would make a failing receiver cost 100 requests at once.
   */
  public static final String MIN_BACKOFF_DELAY = "100ms";

  @Min(0)
  @Max(MAX_RETRY)
  @JsonPropertyDescription("Retries after the first attempt, 0 to 100. Default 3.")
  private Integer retry;

  @Pattern("^(linear|exponential)$")
  @JsonPropertyDescription(
      "linear: attempt n+1 waits backoffDelay x n; exponential (the default): "
          + "backoffDelay x 2^(n-1).")
  private String backoffPolicy;

  @Size(max = DelayedTaskSpec.MAX_LENGTH)
  // CEL's duration() reads the Go forms (500ms, 1.5h); an ISO-8601 one (PT0.05S) is checked by the
  // operator.
  @ValidationRule(
      value =
          "!self.matches(r'^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$') || duration(self) >= duration('"
              + MIN_BACKOFF_DELAY
              + "')",
      message =
          "spec.delivery.backoffDelay must be at least 100ms; use a duration such as 100ms, 1s or 30s")
  @JsonPropertyDescription(
      "The base wait between attempts, a duration such as 1s, 500ms or PT2S, at least 100ms. "
          + "Default 1s. A Retry-After answer makes the wait at least that long, up to 10 minutes.")
  private String backoffDelay;

  @Size(max = DelayedTaskSpec.MAX_LENGTH)
  @JsonPropertyDescription(
      "How long one attempt may take before it counts as unanswered and is retried, a duration "
          + "such as 10s. Default 10s, at most 5m.")
  private String timeout;

  @JsonPropertyDescription(
      "After the final failure the same event, with the headers ce-delayedtaskerrorcode and "
          + "ce-delayedtaskerrordest, goes here with the same retry rules. Same shape as sink; audience is refused here (the "
          + "schema lists it because the shape is shared).")
  private Destination deadLetterSink;

  public Integer getRetry() {
    return retry;
  }

  public void setRetry(Integer retry) {
    this.retry = retry;
  }

  public String getBackoffPolicy() {
    return backoffPolicy;
  }

  public void setBackoffPolicy(String backoffPolicy) {
    this.backoffPolicy = backoffPolicy;
  }

  public String getBackoffDelay() {
    return backoffDelay;
  }

  public void setBackoffDelay(String backoffDelay) {
    this.backoffDelay = backoffDelay;
  }

  public String getTimeout() {
    return timeout;
  }

  public void setTimeout(String timeout) {
    this.timeout = timeout;
  }

  public Destination getDeadLetterSink() {
    return deadLetterSink;
  }

  public void setDeadLetterSink(Destination deadLetterSink) {
    this.deadLetterSink = deadLetterSink;
  }
}
