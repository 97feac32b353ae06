package io.delayedtask.operator.sink;

import io.delayedtask.operator.schedule.ClaimedEntry;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * What {@link DeliveryDecisions} makes of a sink task, besides the status it wrote into the task's
 * desired status: the reconciler's {@code TaskDecider} turns it into its plan. It is the seam
 * between this package and {@code reconcile/}: this package says what the delivery needs, in its
 * own words; {@code reconcile/} owns the plan, the Events and the metrics it names, so nothing here
 * imports the reconciler.
 *
 * @param entry   the task's schedule entry; empty: as the reconciler had it before asking
 * @param claim   what becomes of the claim this reconcile was woken by, if any
 * @param send    the attempt to send now (without waiting: its outcome comes back through
 *                {@link DeliveryOutcomes})
 * @param counted how a recorded attempt counts on /metrics ({@code delayedtask_deliveries_total})
 * @param events  the Events the recorded attempt adds
 */
public record DeliveryStep(Optional<Entry> entry, Claim claim, Optional<DeliveryAttempt> send,
    Optional<Counted> counted, List<Event> events) {

  public DeliveryStep {
    Objects.requireNonNull(entry, "entry");
    Objects.requireNonNull(claim, "claim");
    Objects.requireNonNull(send, "send");
    Objects.requireNonNull(counted, "counted");
    events = List.copyOf(events);
  }

  /** Only the entry changes (or stays, {@link Entry#KEEP}). */
  static DeliveryStep entry(Entry entry) {
    return new DeliveryStep(Optional.of(entry), Claim.UNCHANGED, Optional.empty(), Optional.empty(), List.of());
  }

  /** Only the claim: the entry as the reconciler had it. */
  static DeliveryStep claim(Claim claim) {
    return new DeliveryStep(Optional.empty(), claim, Optional.empty(), Optional.empty(), List.of());
  }

  /** The task's schedule entry. */
  public sealed interface Entry {
    /** Leave it (a claim handed back puts it where it should be). */
    record Keep() implements Entry {}

    /** Write it for this time (Redis's clock for a retry). */
    record Write(Instant at) implements Entry {}

    /** Remove it: no attempt is left for this due time, or the task is suspended. */
    record Remove() implements Entry {}

    Entry KEEP = new Keep();
    Entry REMOVE = new Remove();
  }

  /** What becomes of the claim (only a reconcile woken by one has a claim to settle). */
  public sealed interface Claim {
    /** Nothing: no verdict on the claim. */
    record Unchanged() implements Claim {}

    /** Nothing to send for it (no attempt left, or suspended): acknowledge it as stale. */
    record Stale() implements Claim {}

    /** Hand it back to come due again at {@code at}: an attempt's safety net, or after one in flight. */
    record HandBack(Instant at) implements Claim {}

    /**
     * The sink's token would act with the operator's right to request it, and the admission policy
     * that checked the author's is missing: fail closed, as for a Job ({@code what} says what is held back).
     */
    record AwaitAdmissionPolicy(ClaimedEntry claim, String what) implements Claim {}

    Claim UNCHANGED = new Unchanged();
    Claim STALE = new Stale();
  }

  /** How a recorded attempt counts on /metrics. */
  public enum Counted { DELIVERED, RETRY, FAILED, DEAD_LETTERED }

  /** An Event on the task, by what happened; the reconciler names its reason. */
  public record Event(Kind kind, String message) {
    /** Delivered and DeadLettered are Normal Events, DeliveryFailed a Warning. */
    public enum Kind { DELIVERED, DEAD_LETTERED, DELIVERY_FAILED }
  }
}
