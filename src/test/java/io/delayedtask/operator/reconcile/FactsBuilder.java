package io.delayedtask.operator.reconcile;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.schedule.ClaimedEntry;
import io.delayedtask.operator.sink.DeliveryOutcome;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;

/**
 * The facts a decider test decides on, naming only what the test is about: a task at a time, and
 * any of its Jobs, the claim waiting for it, the outcome of its last delivery attempt, a delivery
 * in flight. The rest is as the reconciler gathers it before any effect of the reconcile (the
 * admission policy in place, no answer to a Job's creation or dry run yet); {@link TaskFacts}'s
 * {@code with...} methods add those.
 */
final class FactsBuilder {
  private final DelayedTask task;
  private final Instant now;
  private Map<String, Job> jobs = Map.of();
  private Optional<ClaimedEntry> claim = Optional.empty();
  private Optional<DeliveryOutcome> delivery = Optional.empty();
  private boolean deliveryInFlight;

  private FactsBuilder(DelayedTask task, Instant now) {
    this.task = task;
    this.now = now;
  }

  /** The facts of {@code task} decided at {@code now}: no Job, no claim, no delivery. */
  static FactsBuilder factsOf(DelayedTask task, Instant now) {
    return new FactsBuilder(task, now);
  }

  /** Its Jobs by name, as the cache holds them. */
  FactsBuilder jobs(Map<String, Job> jobs) {
    this.jobs = jobs;
    return this;
  }

  /** The schedule's claim waiting for it: the leader's poller found it due. */
  FactsBuilder claim(ClaimedEntry claim) {
    return claim(Optional.of(claim));
  }

  /** The claim waiting for it, if any. */
  FactsBuilder claim(Optional<ClaimedEntry> claim) {
    this.claim = claim;
    return this;
  }

  /** The outcome of its last delivery attempt, waiting to be recorded. */
  FactsBuilder delivery(DeliveryOutcome outcome) {
    this.delivery = Optional.of(outcome);
    return this;
  }

  /** A delivery request of it still in flight. */
  FactsBuilder deliveryInFlight() {
    this.deliveryInFlight = true;
    return this;
  }

  TaskFacts build() {
    return new TaskFacts(task, jobs, claim, now, delivery, deliveryInFlight);
  }
}
