package io.delayedtask.operator.leader;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.schedule.TaskSchedule;
import io.delayedtask.operator.task.ScheduleIds;
import io.delayedtask.operator.task.SpecValidator;
import io.delayedtask.operator.task.TaskState;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
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
 *
 * <p>The tasks come from this process's informer cache ({@link TaskCache}), so a resync costs the
 * API server nothing; only an entry whose task the cache does not hold is checked with a GET before
 * it is removed (the cache may trail a task another process just created). The writes are batched
 * ({@link TaskSchedule#repairAll}): 50,000 entries are about a hundred script calls.
 */
public class ScheduleResync {
  public static final String REPAIRS = "delayedtask.resync.repairs";
  private static final Logger LOG = LoggerFactory.getLogger(ScheduleResync.class);

  private final TaskCache tasks;
  private final KubernetesClient client;
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

  /** Thrown by {@link #run()} while the task cache has not been filled yet: nothing to compare with. */
  public static final class CacheNotSynced extends RuntimeException {
    CacheNotSynced() {
      super("the DelayedTask cache has not synced with the API server yet");
    }
  }

  public ScheduleResync(TaskCache tasks, KubernetesClient client, TaskSchedule schedule, SpecValidator validator,
      MeterRegistry registry) {
    this.tasks = tasks;
    this.client = client;
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

  /**
   * One pass; throws ScheduleUnavailableException when Redis is down, {@link CacheNotSynced} before
   * the informer has listed the tasks.
   */
  public Repairs run() {
    return run(() -> { });
  }

  /**
   * The same, calling {@code entriesWritten} once every missing or early entry is written: before
   * the entries of tasks that are gone are checked and removed, which may take GETs.
   */
  public Repairs run(Runnable entriesWritten) {
    if (!tasks.synced()) {
      throw new CacheNotSynced();
    }
    // Redis first: a task that fires between the two reads then shows as fired in the cache, instead
    // of as waiting without an entry (which would add an entry it no longer needs).
    Map<String, Instant> waiting = schedule.waitingEntries();
    Set<String> inFlight = new HashSet<>(schedule.inFlightIds());
    Map<String, Instant> expected = new HashMap<>();
    Map<String, String> listedVersions = new HashMap<>();
    Set<String> seen = new HashSet<>();
    Set<String> uids = new HashSet<>();
    tasks.all().forEach(task -> {
      uids.add(task.getMetadata().getUid());
      if (task.getMetadata().getDeletionTimestamp() == null) {
        TaskState.waitingDue(task, validator).ifPresent(due -> {
          expected.put(ScheduleIds.idOf(task), due);
          listedVersions.put(ScheduleIds.idOf(task), task.getMetadata().getResourceVersion());
        });
        if (task.getStatus() != null
            && Objects.equals(task.getStatus().getObservedGeneration(), task.getMetadata().getGeneration())) {
          seen.add(ScheduleIds.idOf(task));
        }
      }
    });
    validator.retainOnly(uids);
    Map<String, Instant> missing = new HashMap<>();
    Map<String, Instant> early = new HashMap<>();
    expected.forEach((id, due) -> {
      Instant score = waiting.get(id);
      if (score == null && !inFlight.contains(id)) {
        missing.put(id, due);
      } else if (score != null && score.isBefore(due)) {
        early.put(id, due);
      }
      // A later score is a retry time the reconciler chose (backoff, or clocks that disagree): left alone.
    });
    // The list is the informer's; this process's own latest status writes (a task it fired moments
    // ago) are in the cache's overlay, which get() sees: a task that no longer waits is not re-added.
    missing.keySet().removeIf(id -> !sameVersionAsListed(id, listedVersions.get(id)) && !stillWaits(id));
    Map<String, Instant> toRepair = new HashMap<>(missing);
    toRepair.putAll(early);
    // repairAll() writes only what is still missing or early when it runs: between the snapshot and
    // now an entry may have been claimed, or released with a retry time.
    Set<String> written = toRepair.isEmpty() ? Set.of() : schedule.repairAll(toRepair);
    entriesWritten.run();
    int add = (int) written.stream().filter(missing::containsKey).count();
    int move = written.size() - add;
    int ofSeen = (int) written.stream().filter(seen::contains).count();
    int remove = 0;
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

  /** The cache still holds the version of the task that was listed (so what was decided of it holds). */
  private boolean sameVersionAsListed(String id, String listedVersion) {
    return ScheduleIds.parse(id)
        .flatMap(ref -> tasks.get(ref.namespace(), ref.name()))
        .map(task -> Objects.equals(task.getMetadata().getResourceVersion(), listedVersion))
        .orElse(false);
  }

  /**
   * The task as the API server has it, or null. A 403 (a namespace this operator may not read, no
   * longer among those it watches) counts as gone: the entry is removed, once, with a log line,
   * rather than failing every resync.
   */
  private DelayedTask live(ScheduleIds.TaskRef ref) {
    try {
      return client.resources(DelayedTask.class).inNamespace(ref.namespace()).withName(ref.name()).get();
    } catch (KubernetesClientException e) {
      if (e.getCode() != 403) {
        throw e;
      }
      LOG.warn("Removing the schedule entry of {}/{}: its namespace is not one this operator may read (403)",
          ref.namespace(), ref.name());
      return null;
    }
  }

  /**
   * Checked again one by one before an entry is removed: the cache may have moved on since it was
   * listed, and a task it does not hold at all is asked of the API server (created moments ago by
   * someone whose watch is ahead of ours, or really gone).
   */
  private boolean stillWaits(String id) {
    Optional<ScheduleIds.TaskRef> ref = ScheduleIds.parse(id);
    if (ref.isEmpty()) {
      return false;
    }
    DelayedTask task = tasks.get(ref.get().namespace(), ref.get().name()).orElseGet(() -> live(ref.get()));
    return task != null && ref.get().uid().equals(task.getMetadata().getUid())
        && task.getMetadata().getDeletionTimestamp() == null
        && TaskState.waitingDue(task, validator).isPresent();
  }
}
