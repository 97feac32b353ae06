package io.delayedtask.operator.leader;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.schedule.AsyncDueEntryHandler;
import io.delayedtask.operator.schedule.ClaimedEntry;
import io.delayedtask.operator.schedule.Disposition;
import io.delayedtask.operator.task.ScheduleIds;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.processing.event.Event;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.AbstractEventSource;
import io.javaoperatorsdk.operator.processing.event.source.ResourceEventAware;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The hand-off from the leader's poller to the reconciler: each claimed schedule entry becomes a
 * secondary resource of its task ({@code context.getSecondaryResource(ClaimedEntry.class)}) and an
 * event that makes JOSDK reconcile that task. The reconcile, the one writer of the task's status,
 * decides from its cache whether and how to fire and then {@link #settle settles} the claim; the
 * poller acknowledges or releases it in Redis. Firing thereby never runs beside another reconcile of
 * the same task, and needs no lock of its own.
 *
 * <p>A claim whose task this process does not know is checked once against the API server (a task
 * just created elsewhere, or an entry left by a deleted one); one whose task was re-created (another
 * uid) is stale at once. When the reconcile is not there to settle a claim (leadership ends, the
 * task is deleted), the claim is handed back or dropped here.
 */
public final class DueClaims extends AbstractEventSource<ClaimedEntry, DelayedTask>
    implements AsyncDueEntryHandler, ResourceEventAware<DelayedTask> {
  private static final Logger LOG = LoggerFactory.getLogger(DueClaims.class);
  private static final Duration FIRST_RETRY = Duration.ofMillis(500);
  private static final Duration MAX_RETRY = Duration.ofSeconds(30);
  private static final int MAX_TRACKED_RETRIES = 10_000;

  private final TaskCache tasks;
  private final KubernetesClient client;
  private final Clock clock;
  private final Map<ResourceID, Pending> pending = new ConcurrentHashMap<>();
  /** Told of each task a claim is handed to, before its reconcile is asked for (a queue may let it jump). */
  private volatile Consumer<ResourceID> onClaim = task -> { };
  /** Consecutive transient failures per entry id, for the backoff; forgotten when the entry is acknowledged. */
  private final Map<String, Integer> attempts = java.util.Collections.synchronizedMap(
      new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Integer> eldest) {
          return size() > MAX_TRACKED_RETRIES;
        }
      });

  /** A claim handed to the reconciler and not yet settled. */
  private record Pending(ClaimedEntry entry, String uid, CompletableFuture<Disposition> settled) {}

  public DueClaims(TaskCache tasks, KubernetesClient client, Clock clock) {
    super(ClaimedEntry.class, "due-claims");
    this.tasks = tasks;
    this.client = client;
    this.clock = clock;
  }

  @Override
  public CompletionStage<Disposition> handle(ClaimedEntry entry) {
    Optional<ScheduleIds.TaskRef> ref = ScheduleIds.parse(entry.id());
    if (ref.isEmpty()) {
      LOG.warn("Schedule entry '{}' is not a task id (namespace/name/uid); dropping it", entry.id());
      return CompletableFuture.completedFuture(Disposition.acknowledge());
    }
    if (!stillThere(ref.get())) {
      LOG.debug("Entry {} is stale: its task is gone or was re-created", entry.id());
      return CompletableFuture.completedFuture(Disposition.acknowledge());
    }
    ResourceID task = new ResourceID(ref.get().name(), ref.get().namespace());
    Pending claim = new Pending(entry, ref.get().uid(), new CompletableFuture<>());
    Pending replaced = pending.put(task, claim);
    if (replaced != null) {
      // The older claim's lease ran out and the entry was claimed again: its token is dead.
      replaced.settled().complete(Disposition.acknowledge());
    }
    claim.settled().whenComplete((disposition, error) -> pending.remove(task, claim));
    onClaim.accept(task);
    if (getEventHandler() != null) {
      getEventHandler().handleEvent(new Event(task));
    }
    return claim.settled();
  }

  /**
   * True unless the task is known to be gone or re-created. A task the cache does not hold is asked
   * of the API server once: that is the rare case of an entry left by a task deleted while no
   * operator ran, or of a task created moments ago and not yet seen by this process's watch.
   */
  private boolean stillThere(ScheduleIds.TaskRef ref) {
    Optional<DelayedTask> known = tasks.get(ref.namespace(), ref.name());
    if (known.isPresent()) {
      return ref.uid().equals(known.get().getMetadata().getUid());
    }
    if (!tasks.synced()) {
      return true; // the reconcile follows once the cache has it
    }
    DelayedTask live = client.resources(DelayedTask.class).inNamespace(ref.namespace()).withName(ref.name()).get();
    return live != null && ref.uid().equals(live.getMetadata().getUid());
  }

  /** Whether this claim is still waiting to be settled. */
  public boolean isWaiting(ClaimedEntry entry) {
    return ScheduleIds.parse(entry.id())
        .map(ref -> pending.get(new ResourceID(ref.name(), ref.namespace())))
        .filter(claim -> claim.entry().equals(entry))
        .isPresent();
  }

  /** Whether a claim of this task waits for its reconcile. */
  public boolean holdsClaim(ResourceID task) {
    return pending.containsKey(task);
  }

  /** {@code listener} is told of each task a claim is handed to (the reconcile queue moves it ahead). */
  public void onClaim(Consumer<ResourceID> listener) {
    this.onClaim = listener;
  }

  /** The claim waiting for this task's reconcile: at most one. */
  @Override
  public Set<ClaimedEntry> getSecondaryResources(DelayedTask task) {
    Pending claim = pending.get(ResourceID.fromResource(task));
    return claim != null && claim.uid().equals(task.getMetadata().getUid()) ? Set.of(claim.entry()) : Set.of();
  }

  /** The reconcile is done with this claim: acknowledge it, or put it back to wait. */
  public void settle(ClaimedEntry entry, Disposition disposition) {
    if (disposition instanceof Disposition.Acknowledge) {
      attempts.remove(entry.id());
    }
    ScheduleIds.parse(entry.id())
        .map(ref -> pending.get(new ResourceID(ref.name(), ref.namespace())))
        .filter(claim -> claim.entry().equals(entry))
        .ifPresent(claim -> claim.settled().complete(disposition));
  }

  /** Puts the claim back with exponential backoff: a transient failure, tried again later. */
  public Instant retryLater(ClaimedEntry entry, String why) {
    int attempt = attempts.merge(entry.id(), 1, Integer::sum);
    Duration delay = backoff(attempt);
    LOG.warn("Will retry in {} ms (attempt {}): {}", delay.toMillis(), attempt, why);
    Instant at = clock.instant().plus(delay);
    settle(entry, Disposition.retryAt(at));
    return at;
  }

  static Duration backoff(int attempt) {
    int shift = Math.min(attempt - 1, 16);
    Duration delay = FIRST_RETRY.multipliedBy(1L << shift);
    return delay.compareTo(MAX_RETRY) > 0 ? MAX_RETRY : delay;
  }

  /**
   * Leadership ends: every claim not yet settled goes back to wait at the due time it was claimed
   * for, so the next leader fires it without waiting out the lease.
   */
  public void handBackAll() {
    for (Pending claim : pending.values()) {
      claim.settled().complete(Disposition.retryAt(claim.entry().due()));
    }
  }

  /** A task deleted without a reconcile in between (no finalizer left): its claim is stale. */
  @Override
  public void onResourceDeleted(DelayedTask task) {
    Pending claim = pending.get(ResourceID.fromResource(task));
    if (claim != null && Objects.equals(claim.uid(), task.getMetadata().getUid())) {
      claim.settled().complete(Disposition.acknowledge());
    }
  }

  /** Claims waiting for their reconcile (for tests and the stop path). */
  public int waiting() {
    return pending.size();
  }
}
