package io.delayedtask.operator.leader;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.Phase;
import io.delayedtask.operator.schedule.QueueRef;
import io.delayedtask.operator.schedule.TaskSchedule;
import io.delayedtask.operator.task.spec.SpecValidator;
import io.delayedtask.operator.task.status.TaskState;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
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
 *
 * <p>The tasks come from this process's informer cache ({@link TaskCache}), so a resync costs the
 * API server nothing; only an entry whose task the cache does not hold is checked with a GET before
 * it is removed (the cache may trail a task another process just created). The writes are batched
 * ({@link TaskSchedule#repairAll}): 50,000 entries are about a hundred script calls.
 */
public class ScheduleResync {
  public static final String REPAIRS = "delayedtask.resync.repairs";

  /**
   * How long a queue's slot may be held by a dispatch that runs no Job (a delivery attempt: its
   * timeout is at most 5 minutes, and its answer is recorded right after) before the resync frees
   * it.
   */
  static final java.time.Duration SLOT_GRACE = java.time.Duration.ofMinutes(6);

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

  /**
   * Thrown by {@link #run()} while the task cache has not been filled yet: nothing to compare with.
   */
  public static final class CacheNotSynced extends RuntimeException {
    CacheNotSynced() {
      super("the DelayedTask cache has not synced with the API server yet");
    }
  }

  public ScheduleResync(
      TaskCache tasks,
      KubernetesClient client,
      TaskSchedule schedule,
      SpecValidator validator,
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
    return Counter.builder(REPAIRS)
        .description("Schedule entries repaired by the resync with the DelayedTasks")
        .tag("kind", kind)
        .register(registry);
  }

  /**
   * One pass; throws ScheduleUnavailableException when Redis is down, {@link CacheNotSynced} before
   * the informer has listed the tasks.
   */
  public Repairs run() {
    return run(() -> {});
  }

  /**
   * The same, calling {@code entriesWritten} once every missing or early entry is written: before
   * the entries of tasks that are gone are checked and removed, which may take GETs.
   */
  public Repairs run(Runnable entriesWritten) {
    if (!tasks.synced()) {
      throw new CacheNotSynced();
    }
    // Redis first: a task that fires between the two reads then shows as fired in the cache,
    // instead
    // of as waiting without an entry (which would add an entry it no longer needs).
    Map<String, Instant> waiting = schedule.waitingEntries();
    Set<String> inFlight = new HashSet<>(schedule.inFlightIds());
    Map<QueueRef, Map<String, Instant>> waitingInQueues = new HashMap<>();
    Map<QueueRef, Set<String>> inFlightInQueues = new HashMap<>();
    for (QueueRef queue : schedule.knownQueues()) {
      waitingInQueues.put(queue, schedule.waitingEntries(queue));
      inFlightInQueues.put(queue, new HashSet<>(schedule.inFlightIds(queue)));
    }
    // Where each waiting task's entry belongs: its shard (key empty), or its queue's group.
    Map<Optional<QueueRef>, Map<String, Instant>> expected = new HashMap<>();
    Map<String, String> listedVersions = new HashMap<>();
    Set<String> seen = new HashSet<>();
    Set<String> uids = new HashSet<>();
    tasks
        .all()
        .forEach(
            task -> {
              uids.add(task.getMetadata().getUid());
              if (task.getMetadata().getDeletionTimestamp() == null) {
                TaskState.waitingDue(task, validator)
                    .ifPresent(
                        due -> {
                          expected
                              .computeIfAbsent(TaskQueues.placement(task), where -> new HashMap<>())
                              .put(ScheduleIds.idOf(task), due);
                          listedVersions.put(
                              ScheduleIds.idOf(task), task.getMetadata().getResourceVersion());
                        });
                if (task.getStatus() != null
                    && Objects.equals(
                        task.getStatus().getObservedGeneration(),
                        task.getMetadata().getGeneration())) {
                  seen.add(ScheduleIds.idOf(task));
                }
              }
            });
    validator.retainOnly(uids);
    Set<QueueRef> queues = new HashSet<>(waitingInQueues.keySet());
    expected.keySet().forEach(where -> where.ifPresent(queues::add));
    schedule.knowQueues(queues);
    for (QueueRef queue : queues) {
      if (!waitingInQueues.containsKey(queue)) { // a queue this process had not polled yet
        waitingInQueues.put(queue, schedule.waitingEntries(queue));
        inFlightInQueues.put(queue, new HashSet<>(schedule.inFlightIds(queue)));
      }
    }
    int[] counts = new int[4]; // added, removed, moved, of seen tasks
    Set<String> writtenOfShards =
        repairWhere(
            Optional.empty(),
            waiting,
            inFlight,
            expected.getOrDefault(Optional.empty(), Map.of()),
            listedVersions,
            seen,
            counts);
    for (QueueRef queue : queues) {
      repairWhere(
          Optional.of(queue),
          waitingInQueues.get(queue),
          inFlightInQueues.get(queue),
          expected.getOrDefault(Optional.of(queue), Map.of()),
          listedVersions,
          seen,
          counts);
    }
    entriesWritten.run();
    counts[1] +=
        removeUnexpected(
            Optional.empty(), waiting, expected.getOrDefault(Optional.empty(), Map.of()));
    for (QueueRef queue : queues) {
      counts[1] +=
          removeUnexpected(
              Optional.of(queue),
              waitingInQueues.get(queue),
              expected.getOrDefault(Optional.of(queue), Map.of()));
      freeLeakedSlots(queue);
    }
    int add = counts[0];
    int remove = counts[1];
    int move = counts[2];
    added.increment(add);
    moved.increment(move);
    removed.increment(remove);
    Repairs repairs = new Repairs(add, remove, move, counts[3]);
    if (repairs.total() > 0) {
      LOG.info("Resync repaired the schedule: {} added, {} removed, {} moved", add, remove, move);
    } else {
      LOG.debug(
          "Resync found the schedule in line with {} waiting tasks (shards: {}, queues: {})",
          expected.values().stream().mapToInt(Map::size).sum(),
          writtenOfShards.size(),
          queues.size());
    }
    return repairs;
  }

  /**
   * Writes the missing and early entries of one place (a shard, or a queue's group); adds to {@code
   * counts} (added, removed, moved, of seen tasks) and returns the ids written.
   */
  private Set<String> repairWhere(
      Optional<QueueRef> where,
      Map<String, Instant> waiting,
      Set<String> inFlight,
      Map<String, Instant> expected,
      Map<String, String> listedVersions,
      Set<String> seen,
      int[] counts) {
    Map<String, Instant> missing = new HashMap<>();
    Map<String, Instant> early = new HashMap<>();
    expected.forEach(
        (id, due) -> {
          Instant score = waiting.get(id);
          if (score == null && !inFlight.contains(id)) {
            missing.put(id, due);
          } else if (score != null && score.isBefore(due)) {
            early.put(id, due);
          }
          // A later score is a retry time the reconciler chose (backoff, or clocks that disagree):
          // left alone.
        });
    // The list is the informer's; this process's own latest status writes (a task it fired moments
    // ago) are in the cache's overlay, which get() sees: a task that no longer waits is not
    // re-added.
    missing
        .keySet()
        .removeIf(id -> !sameVersionAsListed(id, listedVersions.get(id)) && !stillWaits(id, where));
    Map<String, Instant> toRepair = new HashMap<>(missing);
    toRepair.putAll(early);
    // repairAll() writes only what is still missing or early when it runs: between the snapshot and
    // now an entry may have been claimed, or released with a retry time.
    Set<String> written =
        toRepair.isEmpty()
            ? Set.of()
            : where.isPresent()
                ? schedule.repairAll(where.get(), toRepair)
                : schedule.repairAll(toRepair);
    int add = (int) written.stream().filter(missing::containsKey).count();
    counts[0] += add;
    counts[2] += written.size() - add;
    counts[3] += (int) written.stream().filter(seen::contains).count();
    return written;
  }

  /** Removes the waiting entries of one place whose task no longer waits there. */
  private int removeUnexpected(
      Optional<QueueRef> where, Map<String, Instant> waiting, Map<String, Instant> expected) {
    int remove = 0;
    for (String id : waiting.keySet()) {
      if (!expected.containsKey(id) && !stillWaits(id, where)) {
        if (where.isPresent()) {
          schedule.cancelQueued(id, where.get());
        } else {
          schedule.cancel(id);
        }
        remove++;
      }
    }
    return remove;
  }

  /**
   * A queue's concurrency slot whose dispatch ended without its end being seen (a task deleted
   * while no operator ran, a Redis write that failed): freed when its task is gone, names another
   * queue, or neither runs a Job nor began its dispatch within {@link #SLOT_GRACE}.
   */
  private void freeLeakedSlots(QueueRef queue) {
    Instant before = Instant.now().minus(SLOT_GRACE);
    List<String> leaked = new ArrayList<>();
    schedule
        .runningEntries(queue)
        .forEach(
            (id, since) -> {
              Optional<DelayedTask> task =
                  ScheduleIds.parse(id)
                      .flatMap(
                          ref ->
                              tasks
                                  .get(ref.namespace(), ref.name())
                                  .filter(found -> ref.uid().equals(found.getMetadata().getUid())));
              boolean runsJob =
                  task.map(DelayedTask::getStatus)
                      .filter(
                          status ->
                              status.getPhase() == Phase.Running && status.getJobName() != null)
                      .isPresent();
              boolean ours = task.flatMap(TaskQueues::named).filter(queue::equals).isPresent();
              if (!ours || (!runsJob && since.isBefore(before))) {
                leaked.add(id);
              }
            });
    if (!leaked.isEmpty()) {
      LOG.info(
          "Resync freed {} concurrency slots of queue {} whose dispatch had ended",
          leaked.size(),
          queue);
      schedule.freeSlots(queue, leaked);
    }
  }

  /**
   * The cache still holds the version of the task that was listed (so what was decided of it
   * holds).
   */
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
      return client
          .resources(DelayedTask.class)
          .inNamespace(ref.namespace())
          .withName(ref.name())
          .get();
    } catch (KubernetesClientException e) {
      if (e.getCode() != 403) {
        throw e;
      }
      LOG.warn(
          "Removing the schedule entry of {}/{}: its namespace is not one this operator may read (403)",
          ref.namespace(),
          ref.name());
      return null;
    }
  }

  /**
   * Checked again one by one before an entry is removed: the cache may have moved on since it was
   * listed, and a task it does not hold at all is asked of the API server (created moments ago by
   * someone whose watch is ahead of ours, or really gone).
   */
  private boolean stillWaits(String id, Optional<QueueRef> where) {
    Optional<ScheduleIds.TaskRef> ref = ScheduleIds.parse(id);
    if (ref.isEmpty()) {
      return false;
    }
    DelayedTask task =
        tasks.get(ref.get().namespace(), ref.get().name()).orElseGet(() -> live(ref.get()));
    return task != null
        && ref.get().uid().equals(task.getMetadata().getUid())
        && task.getMetadata().getDeletionTimestamp() == null
        && TaskState.waitingDue(task, validator).isPresent()
        && TaskQueues.placement(task).equals(where);
  }
}
