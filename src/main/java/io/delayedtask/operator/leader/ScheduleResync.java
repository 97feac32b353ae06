package io.delayedtask.operator.leader;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.schedule.TaskSchedule;
import io.delayedtask.operator.task.ScheduleIds;
import io.delayedtask.operator.task.SpecValidator;
import io.delayedtask.operator.task.TaskState;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Rebuilds the Redis schedule from the DelayedTasks, which are the truth: adds missing entries,
 * removes those of tasks that are gone or no longer wait, and moves entries scored earlier than
 * their task's due time.
 */
public class ScheduleResync {
  public static final String REPAIRS = "delayedtask.resync.repairs";
  private static final Logger LOG = LoggerFactory.getLogger(ScheduleResync.class);

  private final KubernetesClient client;
  private final Set<String> namespaces;
  private final TaskSchedule schedule;
  private final SpecValidator validator;
  private final Counter added;
  private final Counter removed;
  private final Counter moved;

  /**
   * What one resync changed. {@code ofSeenTasks}: of the added and moved entries, those of tasks
   * whose status already described their current generation, so the reconciler had written their
   * entry: a missing or early one is drift, not a task created moments before the resync.
   */
  public record Repairs(int added, int removed, int moved, int ofSeenTasks) {
    public Repairs(int added, int removed, int moved) {
      this(added, removed, moved, 0);
    }

    public int total() {
      return added + removed + moved;
    }
  }

  public ScheduleResync(KubernetesClient client, Set<String> namespaces, TaskSchedule schedule,
      SpecValidator validator, MeterRegistry registry) {
    this.client = client;
    this.namespaces = Set.copyOf(namespaces);
    this.schedule = schedule;
    this.validator = validator;
    this.added = repairs(registry, "added");
    this.removed = repairs(registry, "removed");
    this.moved = repairs(registry, "moved");
  }

  private static Counter repairs(MeterRegistry registry, String kind) {
    return Counter.builder(REPAIRS).description("Schedule entries repaired by the resync with the DelayedTasks")
        .tag("kind", kind).register(registry);
  }

  /** One pass; throws ScheduleUnavailableException or KubernetesClientException when a side is down. */
  public Repairs run() {
    // Redis first: a task that fires between the two reads then shows as fired in the list, instead
    // of as waiting without an entry (which would add an entry it no longer needs).
    Map<String, Instant> waiting = schedule.waitingEntries();
    Set<String> inFlight = new HashSet<>(schedule.inFlightIds());
    Map<String, Instant> expected = new HashMap<>();
    Set<String> seen = new HashSet<>();
    for (DelayedTask task : listTasks()) {
      if (task.getMetadata().getDeletionTimestamp() == null) {
        TaskState.waitingDue(task, validator).ifPresent(due -> expected.put(ScheduleIds.idOf(task), due));
        if (task.getStatus() != null
            && Objects.equals(task.getStatus().getObservedGeneration(), task.getMetadata().getGeneration())) {
          seen.add(ScheduleIds.idOf(task));
        }
      }
    }
    int add = 0;
    int move = 0;
    int remove = 0;
    int ofSeen = 0;
    for (Map.Entry<String, Instant> task : expected.entrySet()) {
      Instant score = waiting.get(task.getKey());
      // repair() writes only if the entry is still missing or early when it runs: between this
      // snapshot and now it may have been claimed, or released with a retry time.
      int repaired = 0;
      if (score == null && !inFlight.contains(task.getKey())) {
        repaired = schedule.repair(task.getKey(), task.getValue()) ? 1 : 0;
        add += repaired;
      } else if (score != null && score.isBefore(task.getValue())) {
        repaired = schedule.repair(task.getKey(), task.getValue()) ? 1 : 0;
        move += repaired;
      }
      ofSeen += seen.contains(task.getKey()) ? repaired : 0;
      // A later score is a retry time the firer chose (backoff, or clocks that disagree): left alone.
    }
    for (String id : waiting.keySet()) {
      if (!expected.containsKey(id) && !stillWaits(id)) {
        schedule.cancel(id);
        remove++;
      }
    }
    added.increment(add);
    moved.increment(move);
    removed.increment(remove);
    Repairs repairs = new Repairs(add, remove, move, ofSeen);
    if (repairs.total() > 0) {
      LOG.info("Resync repaired the schedule: {} added, {} removed, {} moved", add, remove, move);
    } else {
      LOG.debug("Resync found the schedule in line with {} waiting tasks", expected.size());
    }
    return repairs;
  }

  /** Checked again one by one: the task may have been created after the list was taken. */
  private boolean stillWaits(String id) {
    Optional<ScheduleIds.TaskRef> ref = ScheduleIds.parse(id);
    if (ref.isEmpty()) {
      return false;
    }
    DelayedTask task = client.resources(DelayedTask.class).inNamespace(ref.get().namespace())
        .withName(ref.get().name()).get();
    return task != null && ref.get().uid().equals(task.getMetadata().getUid())
        && task.getMetadata().getDeletionTimestamp() == null
        && TaskState.waitingDue(task, validator).isPresent();
  }

  private List<DelayedTask> listTasks() {
    if (namespaces.isEmpty()) {
      return client.resources(DelayedTask.class).inAnyNamespace().list().getItems();
    }
    List<DelayedTask> tasks = new ArrayList<>();
    for (String namespace : namespaces) {
      tasks.addAll(client.resources(DelayedTask.class).inNamespace(namespace).list().getItems());
    }
    return tasks;
  }
}
