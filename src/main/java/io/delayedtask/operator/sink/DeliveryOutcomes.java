package io.delayedtask.operator.sink;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.javaoperatorsdk.operator.processing.event.Event;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.AbstractEventSource;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The way back from the HTTP client to the task's reconcile: an attempt's outcome becomes a
 * secondary resource of its task ({@code context.getSecondaryResource(DeliveryOutcome.class)}) and
 * an event that reconciles it, so the answer is recorded by the one writer of the task's status,
 * and no reconcile thread ever waits for an answer. Also knows which tasks have a request in
 * flight, so a claim that arrives meanwhile (a request queued behind the per-host limit longer than
 * its schedule entry's safety net) does not send a second one.
 */
public final class DeliveryOutcomes extends AbstractEventSource<DeliveryOutcome, DelayedTask> {
  private final Map<ResourceID, DeliveryOutcome> outcomes = new ConcurrentHashMap<>();
  private final Set<ResourceID> inFlight = ConcurrentHashMap.newKeySet();

  public DeliveryOutcomes() {
    super(DeliveryOutcome.class, "delivery-outcomes");
  }

  /** A request for this task is being sent. */
  void sending(ResourceID task) {
    inFlight.add(task);
  }

  /** Whether a request for this task is still waiting for its answer. */
  public boolean inFlight(ResourceID task) {
    return inFlight.contains(task);
  }

  /**
   * Whether an attempt's outcome for this task waits to be recorded (its reconcile is an
   * outcome's).
   */
  public boolean awaitsRecord(ResourceID task) {
    return outcomes.containsKey(task);
  }

  /** The attempt ended (or could not start): reconcile the task to record it. */
  void completed(ResourceID task, DeliveryOutcome outcome) {
    outcomes.put(task, outcome);
    inFlight.remove(task);
    if (getEventHandler() != null) {
      getEventHandler().handleEvent(new Event(task));
    }
  }

  /** The outcome is recorded in the task's status (or no longer matters): forget it. */
  public void recorded(DelayedTask task, DeliveryOutcome outcome) {
    outcomes.remove(ResourceID.fromResource(task), outcome);
  }

  /** The task is gone: an answer still waiting for it no longer matters. */
  public void forget(DelayedTask task) {
    outcomes.remove(ResourceID.fromResource(task));
  }

  @Override
  public Set<DeliveryOutcome> getSecondaryResources(DelayedTask task) {
    DeliveryOutcome outcome = outcomes.get(ResourceID.fromResource(task));
    return outcome != null && Objects.equals(outcome.uid(), task.getMetadata().getUid())
        ? Set.of(outcome)
        : Set.of();
  }
}
