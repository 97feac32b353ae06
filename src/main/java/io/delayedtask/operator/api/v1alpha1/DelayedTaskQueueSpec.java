package io.delayedtask.operator.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.ValidationRule;
import java.util.Objects;

/** A queue's limits and pause; every field optional. */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonIgnoreProperties(ignoreUnknown = true) // a newer CRD's fields
@ValidationRule(
    value = "!has(self.maxBurst) || has(self.maxDispatchesPerSecond)",
    message =
        "spec.maxBurst is the size of the rate's token bucket and applies only with "
            + "spec.maxDispatchesPerSecond; add spec.maxDispatchesPerSecond or remove spec.maxBurst")
public class DelayedTaskQueueSpec {
  /** The highest rate and concurrency a queue may ask for. */
  public static final int MAX_LIMIT = 10_000;

  @ValidationRule(
      value = "self > 0.0 && self <= 10000.0",
      message =
          "spec.maxDispatchesPerSecond must be greater than 0 and at most 10000 (fractions allowed: 0.5 is one "
              + "every 2 s); remove it for no rate limit")
  @JsonPropertyDescription(
      "At most this many of the queue's tasks fire per second, on average: a token bucket of "
          + "maxBurst tokens refilled at this rate. Greater than 0, at most 10000; fractions allowed (0.5 = one every "
          + "2 s). Unset: no rate limit.")
  private Double maxDispatchesPerSecond;

  @Min(1)
  @JsonPropertyDescription(
      "The token bucket's size: how many tasks may fire at once after a quiet spell; in any t "
          + "seconds the queue fires at most maxBurst + maxDispatchesPerSecond * t. At least 1. Default: "
          + "max(1, ceil(maxDispatchesPerSecond)). Only with maxDispatchesPerSecond.")
  private Integer maxBurst;

  @Min(1)
  @Max(MAX_LIMIT)
  @JsonPropertyDescription(
      "At most this many of the queue's tasks in flight at once: Jobs created and not yet "
          + "finished, sink requests not yet answered. 1 to 10000. Unset: no limit.")
  private Integer maxConcurrentDispatches;

  @Default("false")
  @JsonPropertyDescription(
      "True: none of the queue's tasks fires; those falling due wait (their "
          + "startingDeadlineSeconds still counts) and fire in due-time order, oldest first, when it is false again.")
  private Boolean paused;

  public Double getMaxDispatchesPerSecond() {
    return maxDispatchesPerSecond;
  }

  public void setMaxDispatchesPerSecond(Double maxDispatchesPerSecond) {
    this.maxDispatchesPerSecond = maxDispatchesPerSecond;
  }

  public Integer getMaxBurst() {
    return maxBurst;
  }

  public void setMaxBurst(Integer maxBurst) {
    this.maxBurst = maxBurst;
  }

  public Integer getMaxConcurrentDispatches() {
    return maxConcurrentDispatches;
  }

  public void setMaxConcurrentDispatches(Integer maxConcurrentDispatches) {
    this.maxConcurrentDispatches = maxConcurrentDispatches;
  }

  public Boolean getPaused() {
    return paused;
  }

  public void setPaused(Boolean paused) {
    this.paused = paused;
  }

  /**
   * Null-safe view of {@link #getPaused()} (not isPaused: Jackson would take it for the property
   * and ignore it).
   */
  public boolean paused() {
    return Boolean.TRUE.equals(paused);
  }

  /**
   * The bucket's size in effect: maxBurst, else max(1, ceil(maxDispatchesPerSecond)); 0 without a
   * rate.
   */
  @JsonIgnore
  public int effectiveBurst() {
    if (maxDispatchesPerSecond == null) {
      return 0;
    }
    if (maxBurst != null) {
      return maxBurst;
    }
    return (int) Math.max(1, Math.ceil(maxDispatchesPerSecond));
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof DelayedTaskQueueSpec that
        && Objects.equals(maxDispatchesPerSecond, that.maxDispatchesPerSecond)
        && Objects.equals(maxBurst, that.maxBurst)
        && Objects.equals(maxConcurrentDispatches, that.maxConcurrentDispatches)
        && Objects.equals(paused, that.paused);
  }

  @Override
  public int hashCode() {
    return Objects.hash(maxDispatchesPerSecond, maxBurst, maxConcurrentDispatches, paused);
  }
}
