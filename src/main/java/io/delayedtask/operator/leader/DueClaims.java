package io.delayedtask.operator.leader;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.schedule.AsyncDueEntryHandler;
import io.delayedtask.operator.schedule.ClaimedEntry;
import io.delayedtask.operator.schedule.Disposition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.javaoperatorsdk.operator.processing.event.Event;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.AbstractEventSource;
import io.javaoperatorsdk.operator.processing.event.source.ResourceEventAware;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The hand-off from the leader's poller to the reconciler: each claimed schedule entry becomes a
 * secondary resource of its task ({@code context.getSecondaryResource(ClaimedEntry.class)}) and an
 * event that makes JOSDK reconcile that task. The reconcile, the one writer of the task's status,
 * decides from its cache whether and how to fire and then {@link #settle settles} the claim; the
 * poller acknowledges or releases it in Redis. Firing thereby never runs beside another reconcile
 * of the same task, and needs no lock of its own.
 *
 * <p>A claim whose task this process does not know is checked once against the API server (a task
 * just created elsewhere, or an entry left by a deleted one), on a thread of its own, never the
 * poller's: stale entries after downtime do not hold up the claims behind them. A task the API
 * server will not show (403: a namespace this operator does not watch) has its entry dropped. One
 * whose task was re-created (another uid) is stale at once. When the reconcile is not there to
 * settle a claim (leadership ends, the task is deleted), the claim is handed back or dropped here.
 *
 * <p>A claim that failed goes back with the schedule's one backoff ({@link #retryLater}): the
 * poller times it from the claim's Redis clock and counts the attempts.
 */
public final class DueClaims extends AbstractEventSource<ClaimedEntry, DelayedTask>
    implements AsyncDueEntryHandler, ResourceEventAware<DelayedTask> {
  private static final Logger LOG = LoggerFactory.getLogger(DueClaims.class);

  private final TaskCache tasks;
  private final KubernetesClient client;

  /** Where a claim of a task the cache lacks is looked up: one thread, apart from the poller's. */
  private final ExecutorService lookups =
      Executors.newSingleThreadExecutor(
          runnable -> {
            Thread thread = new Thread(runnable, "claim-lookups");
            thread.setDaemon(true);
            return thread;
          });

  private final Map<ResourceID, Pending> pending = new ConcurrentHashMap<>();

  /**
   * Told of each task a claim is handed to, before its reconcile is asked for (a queue may let it
   * jump).
   */
  private volatile Consumer<ResourceID> onClaim = task -> {};

  /** A claim handed to the reconciler and not yet settled. */
  private record Pending(ClaimedEntry entry, String uid, CompletableFuture<Disposition> settled) {}

  public DueClaims(TaskCache tasks, KubernetesClient client) {
    super(ClaimedEntry.class, "due-claims");
    this.tasks = tasks;
    this.client = client;
  }

  /** Called on the poller's thread: no network call here. */
  @Override
  public CompletionStage<Disposition> handle(ClaimedEntry entry) {
    Optional<ScheduleIds.TaskRef> parsed = ScheduleIds.parse(entry.id());
    if (parsed.isEmpty()) {
      LOG.warn(
          "Schedule entry '{}' is not a task id (namespace/name/uid); dropping it", entry.id());
      return CompletableFuture.completedFuture(Disposition.acknowledge());
    }
    ScheduleIds.TaskRef ref = parsed.get();
    Optional<DelayedTask> known = tasks.get(ref.namespace(), ref.name());
    if (known.isPresent() || !tasks.synced()) {
      // A task the cache holds (stale if re-created), or a cache still filling: then the reconcile
      // follows once the cache has the task.
      return known.isPresent() && !ref.uid().equals(known.get().getMetadata().getUid())
          ? stale(entry)
          : handOver(entry, ref);
    }
    if (lookups.isShutdown()) {
      // JOSDK has stopped this source (the operator stops): the next leader fires it at its due
      // time.
      return CompletableFuture.completedFuture(Disposition.retryAt(entry.due()));
    }
    return CompletableFuture.supplyAsync(() -> existsOnApiServer(ref), lookups)
        .thenCompose(exists -> exists ? handOver(entry, ref) : stale(entry));
  }

  private static CompletionStage<Disposition> stale(ClaimedEntry entry) {
    LOG.debug("Entry {} is stale: its task is gone or was re-created", entry.id());
    return CompletableFuture.completedFuture(Disposition.acknowledge());
  }

  /**
   * Whether the task of a claim the cache lacks is on the API server: the rare case of an entry
   * left by a task deleted while no operator ran, or of a task created moments ago and not yet seen
   * by this process's watch. A 403 means a namespace this operator may not read (no longer
   * watched): its entry is dropped, with one line in the log.
   */
  private boolean existsOnApiServer(ScheduleIds.TaskRef ref) {
    try {
      DelayedTask live =
          client
              .resources(DelayedTask.class)
              .inNamespace(ref.namespace())
              .withName(ref.name())
              .get();
      return live != null && ref.uid().equals(live.getMetadata().getUid());
    } catch (KubernetesClientException e) {
      if (e.getCode() == 403) {
        LOG.warn(
            "Dropping the schedule entry of {}/{}: its namespace is not one this operator may read (403)",
            ref.namespace(),
            ref.name());
        return false;
      }
      throw e; // the poller backs the claim off
    }
  }

  private CompletionStage<Disposition> handOver(ClaimedEntry entry, ScheduleIds.TaskRef ref) {
    ResourceID task = new ResourceID(ref.name(), ref.namespace());
    Pending claim = new Pending(entry, ref.uid(), new CompletableFuture<>());
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

  /**
   * {@code listener} is told of each task a claim is handed to (the reconcile queue moves it
   * ahead).
   */
  public void onClaim(Consumer<ResourceID> listener) {
    this.onClaim = listener;
  }

  /** The claim waiting for this task's reconcile: at most one. */
  @Override
  public Set<ClaimedEntry> getSecondaryResources(DelayedTask task) {
    Pending claim = pending.get(ResourceID.fromResource(task));
    return claim != null && claim.uid().equals(task.getMetadata().getUid())
        ? Set.of(claim.entry())
        : Set.of();
  }

  /** The reconcile is done with this claim: acknowledge it, or put it back to wait. */
  public void settle(ClaimedEntry entry, Disposition disposition) {
    ScheduleIds.parse(entry.id())
        .map(ref -> pending.get(new ResourceID(ref.name(), ref.namespace())))
        .filter(claim -> claim.entry().equals(entry))
        .ifPresent(claim -> claim.settled().complete(disposition));
  }

  /**
   * A transient failure: the claim goes back with the schedule's backoff, timed from when it was
   * claimed by Redis's clock (SchedulePoller), so this host's clock plays no part.
   */
  public void retryLater(ClaimedEntry entry, String why) {
    settle(entry, Disposition.backoff(why));
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

  @Override
  public void stop() {
    lookups.shutdownNow();
    super.stop();
  }

  /** Claims waiting for their reconcile (for tests and the stop path). */
  public int waiting() {
    return pending.size();
  }
}
