package io.delayedtask.operator.leader;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.schedule.QueueHold;
import io.javaoperatorsdk.operator.processing.event.Event;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.AbstractEventSource;
import io.javaoperatorsdk.operator.processing.event.source.ResourceEventAware;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The due tasks their queue holds, as the leader's claims of the queues report them (once per task
 * and reason, see schedule.QueueGroups): each becomes a secondary resource of its task and an event
 * that reconciles it, so the task's condition {@code Queued} says why it waits, written once per
 * change. A task's hold is forgotten when its claim comes (it fires) or it is deleted.
 */
public final class QueueHolds extends AbstractEventSource<QueueHold, DelayedTask>
    implements ResourceEventAware<DelayedTask> {
  private record Held(QueueHold hold, String uid) {}

  private final Map<ResourceID, Held> held = new ConcurrentHashMap<>();

  public QueueHolds() {
    super(QueueHold.class, "queue-holds");
  }

  /** Called on the poller's thread: no network call here. */
  public void report(List<QueueHold> holds) {
    for (QueueHold hold : holds) {
      ScheduleIds.parse(hold.id())
          .ifPresent(
              ref -> {
                ResourceID task = new ResourceID(ref.name(), ref.namespace());
                Held before = held.put(task, new Held(hold, ref.uid()));
                if ((before == null || !before.hold().equals(hold)) && getEventHandler() != null) {
                  getEventHandler().handleEvent(new Event(task));
                }
              });
    }
  }

  /** The task's claim came: it is no longer held. */
  public void forget(ResourceID task) {
    held.remove(task);
  }

  /** Why the task's queue holds it, if it does. */
  public Optional<QueueHold> of(DelayedTask task) {
    Held hold = held.get(ResourceID.fromResource(task));
    return hold != null && hold.uid().equals(task.getMetadata().getUid())
        ? Optional.of(hold.hold())
        : Optional.empty();
  }

  @Override
  public Set<QueueHold> getSecondaryResources(DelayedTask task) {
    return of(task).map(Set::of).orElse(Set.of());
  }

  @Override
  public void onResourceDeleted(DelayedTask task) {
    held.remove(ResourceID.fromResource(task));
  }

  /** Tasks held now (for the queues' status and tests). */
  public int size() {
    return held.size();
  }
}
