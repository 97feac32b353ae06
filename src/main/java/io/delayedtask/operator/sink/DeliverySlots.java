package io.delayedtask.operator.sink;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * Who may open a delivery request now: at most {@code max} open at once, {@code perHost} to one
 * host and {@code perNamespace} for one namespace's tasks. A request that finds no slot waits,
 * first come first served among those a freed slot fits, at most {@code maxWait} (its attempt's
 * timeout): then it fails as unanswered, and the task's retry policy takes over. OkHttp's own
 * dispatcher queue is not used for this, because its call timeout starts only when a call leaves
 * that queue: a queued call could wait for ever.
 *
 * <p>A namespace whose receivers never answer holds its slots until their timeouts, so the caps
 * alone would let a few such namespaces fill the whole pool ({@code max / perNamespace} of them)
 * and make every other namespace wait. So the last {@link #reserve} slots are kept for namespaces
 * that hold few requests ({@link #lightLoad} or fewer): a namespace that delivers now and then
 * finds a slot at once, however many others hang.
 *
 * <p>A host many namespaces share (Knative's broker ingress, an allowed SaaS host) would be held
 * whole by one namespace if a namespace's share of a host were the host's cap: so one namespace
 * holds at most {@link #perHostAndNamespace} (half the host's cap, at least 1) of one host's slots.
 */
final class DeliverySlots implements AutoCloseable {
  private final int max;
  private final int perHost;
  private final int perNamespace;

  /** One namespace's share of one host's slots: perHost / 2, at least 1. */
  private final int perHostAndNamespace;

  /** The slots only a lightly loaded namespace may take: min(perNamespace, max / 2). */
  private final int reserve;

  /** A namespace holding fewer than this may use the reserve: perNamespace / 8, at least 1. */
  private final int lightLoad;

  private int open;
  private final Map<String, Integer> openByHost = new HashMap<>();
  private final Map<String, Integer> openByNamespace = new HashMap<>();
  private final Map<List<String>, Integer> openByHostAndNamespace = new HashMap<>();

  /** Waiting requests in arrival order. */
  private final Set<Waiter> waiting = new LinkedHashSet<>();

  private final ScheduledExecutorService timer =
      Executors.newSingleThreadScheduledExecutor(
          runnable -> {
            Thread thread = new Thread(runnable, "delivery-slot-timeouts");
            thread.setDaemon(true);
            return thread;
          });

  DeliverySlots(int max, int perHost, int perNamespace) {
    this.max = max;
    this.perHost = perHost;
    this.perNamespace = perNamespace;
    this.perHostAndNamespace = Math.max(1, perHost / 2);
    this.reserve = Math.min(perNamespace, max / 2);
    this.lightLoad = Math.max(1, perNamespace / 8);
  }

  /** An open request's slot; released once, however often {@link #release} is called. */
  final class Slot {
    private final String host;
    private final String namespace;
    private final long waitedNanos;
    private final AtomicBoolean released = new AtomicBoolean();

    private Slot(String host, String namespace, long waitedNanos) {
      this.host = host;
      this.namespace = namespace;
      this.waitedNanos = waitedNanos;
    }

    /** How long the request waited for this slot. */
    Duration waited() {
      return Duration.ofNanos(waitedNanos);
    }

    void release() {
      if (released.compareAndSet(false, true)) {
        DeliverySlots.this.release(this);
      }
    }
  }

  private final class Waiter {
    final String host;
    final String namespace;
    final long since = System.nanoTime();
    final Consumer<Slot> onSlot;
    final Runnable onTimeout;
    ScheduledFuture<?> expiry;

    Waiter(String host, String namespace, Consumer<Slot> onSlot, Runnable onTimeout) {
      this.host = host;
      this.namespace = namespace;
      this.onSlot = onSlot;
      this.onTimeout = onTimeout;
    }
  }

  /**
   * {@code onSlot} runs with the slot as soon as one fits (at once, on this thread, when one is
   * free); {@code onTimeout} runs instead when none fitted within {@code maxWait}. Neither runs
   * while this object's lock is held.
   */
  void acquire(
      String host, String namespace, Duration maxWait, Consumer<Slot> onSlot, Runnable onTimeout) {
    Waiter waiter = new Waiter(host, namespace, onSlot, onTimeout);
    Slot slot;
    synchronized (this) {
      slot = fits(host, namespace) ? take(host, namespace, 0) : null;
      if (slot == null) {
        waiting.add(waiter);
        waiter.expiry =
            timer.schedule(
                () -> expire(waiter), Math.max(0, maxWait.toNanos()), TimeUnit.NANOSECONDS);
      }
    }
    if (slot != null) {
      onSlot.accept(slot);
    }
  }

  private void expire(Waiter waiter) {
    boolean expired;
    synchronized (this) {
      expired = waiting.remove(waiter);
    }
    if (expired) {
      waiter.onTimeout.run();
    }
  }

  private void release(Slot slot) {
    List<Map.Entry<Waiter, Slot>> started = new ArrayList<>();
    synchronized (this) {
      open--;
      decrement(openByHost, slot.host);
      decrement(openByNamespace, slot.namespace);
      decrement(openByHostAndNamespace, List.of(slot.host, slot.namespace));
      for (Iterator<Waiter> it = waiting.iterator(); it.hasNext() && open < max; ) {
        Waiter waiter = it.next();
        if (fits(waiter.host, waiter.namespace)) {
          it.remove();
          waiter.expiry.cancel(false);
          started.add(
              Map.entry(
                  waiter, take(waiter.host, waiter.namespace, System.nanoTime() - waiter.since)));
        }
      }
    }
    started.forEach(entry -> entry.getKey().onSlot.accept(entry.getValue()));
  }

  private boolean fits(String host, String namespace) {
    int ofNamespace = openByNamespace.getOrDefault(namespace, 0);
    if (open >= max
        || openByHost.getOrDefault(host, 0) >= perHost
        || ofNamespace >= perNamespace
        || openByHostAndNamespace.getOrDefault(List.of(host, namespace), 0)
            >= perHostAndNamespace) {
      return false;
    }
    return open < max - reserve || ofNamespace < lightLoad;
  }

  private Slot take(String host, String namespace, long waitedNanos) {
    open++;
    openByHost.merge(host, 1, Integer::sum);
    openByNamespace.merge(namespace, 1, Integer::sum);
    openByHostAndNamespace.merge(List.of(host, namespace), 1, Integer::sum);
    return new Slot(host, namespace, waitedNanos);
  }

  private static <K> void decrement(Map<K, Integer> counts, K key) {
    counts.computeIfPresent(key, (k, n) -> n <= 1 ? null : n - 1);
  }

  /** Open requests now, overall (for tests). */
  synchronized int open() {
    return open;
  }

  /** Requests waiting for a slot now (for tests). */
  synchronized int waiting() {
    return waiting.size();
  }

  /** Waiting requests fail as timed out no later than their deadline; stops the timer. */
  @Override
  public void close() {
    List<Waiter> left;
    synchronized (this) {
      left = new ArrayList<>(waiting);
      waiting.clear();
    }
    left.forEach(
        waiter -> {
          waiter.expiry.cancel(false);
          waiter.onTimeout.run();
        });
    timer.shutdownNow();
  }
}
