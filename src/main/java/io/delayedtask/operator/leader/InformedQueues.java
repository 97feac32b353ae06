package io.delayedtask.operator.leader;

import io.delayedtask.operator.api.v1alpha1.Condition;
import io.delayedtask.operator.api.v1alpha1.DelayedTaskQueue;
import io.delayedtask.operator.api.v1alpha1.DelayedTaskQueueSpec;
import io.delayedtask.operator.api.v1alpha1.DelayedTaskQueueStatus;
import io.delayedtask.operator.schedule.QueueCounts;
import io.delayedtask.operator.schedule.QueueLimits;
import io.delayedtask.operator.schedule.QueueRef;
import io.delayedtask.operator.schedule.ScheduleUnavailableException;
import io.delayedtask.operator.schedule.TaskSchedule;
import io.delayedtask.operator.task.time.Times;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The DelayedTaskQueues, from an informer: each queue's pause and limits go to the schedule, whose
 * claims of the queue take them (schedule.QueueLimits); a queue not among them once they are listed
 * holds its tasks as missing. While this instance leads, every {@link #STATUS_INTERVAL} it writes
 * each queue's status (one snapshot from Redis per queue, a merge patch only when it changed) and
 * keeps the gauges {@code delayedtask_queue_waiting} and {@code
 * delayedtask_queue_dispatches_total}.
 *
 * <p>A queue deleted releases its tasks: each waiting one gets an Event first ({@code releases}),
 * then the queue's claims go on without limits.
 */
public final class InformedQueues implements AutoCloseable {
  /** At most one status write per queue per this interval (docs/reference.md). */
  public static final Duration STATUS_INTERVAL = Duration.ofSeconds(5);

  private static final Logger LOG = LoggerFactory.getLogger(InformedQueues.class);

  private final KubernetesClient client;
  private final TaskSchedule schedule;
  private final BooleanSupplier leading;
  private final Clock clock;
  private final MeterRegistry registry;
  private final BiConsumer<QueueRef, String> releases;
  private final List<SharedIndexInformer<DelayedTaskQueue>> informers = new ArrayList<>();
  private final Map<QueueRef, Meters> meters = new ConcurrentHashMap<>();
  private final ScheduledExecutorService statusThread =
      Executors.newSingleThreadScheduledExecutor(
          runnable -> {
            Thread thread = new Thread(runnable, "queue-status");
            thread.setDaemon(true);
            return thread;
          });

  /** A queue's gauges: its waiting tasks and dispatches so far, as the last snapshot said. */
  private record Meters(AtomicLong waiting, AtomicLong dispatched) {}

  /**
   * @param namespaces the namespaces to watch; empty: all
   * @param releases told of each task id waiting in a deleted queue, before the queue releases it
   */
  public InformedQueues(
      KubernetesClient client,
      Set<String> namespaces,
      TaskSchedule schedule,
      BooleanSupplier leading,
      Clock clock,
      MeterRegistry registry,
      BiConsumer<QueueRef, String> releases) {
    this.client = client;
    this.schedule = schedule;
    this.leading = leading;
    this.clock = clock;
    this.registry = registry;
    this.releases = releases;
    if (namespaces.isEmpty()) {
      informers.add(client.resources(DelayedTaskQueue.class).inAnyNamespace().runnableInformer(0));
    } else {
      for (String namespace : namespaces) {
        informers.add(
            client.resources(DelayedTaskQueue.class).inNamespace(namespace).runnableInformer(0));
      }
    }
  }

  /** Starts the informers (returns at once) and the status writer. */
  public InformedQueues start() {
    List<CompletableFuture<Void>> synced = new ArrayList<>();
    for (SharedIndexInformer<DelayedTaskQueue> informer : informers) {
      informer.addEventHandler(
          new ResourceEventHandler<>() {
            @Override
            public void onAdd(DelayedTaskQueue queue) {
              schedule.queueLimits(refOf(queue), limitsOf(queue.getSpec()));
            }

            @Override
            public void onUpdate(DelayedTaskQueue before, DelayedTaskQueue queue) {
              schedule.queueLimits(refOf(queue), limitsOf(queue.getSpec()));
            }

            @Override
            public void onDelete(DelayedTaskQueue queue, boolean finalStateUnknown) {
              released(refOf(queue));
            }
          });
      informer.exceptionHandler(
          (started, error) -> {
            LOG.warn(
                "Listing or watching the DelayedTaskQueues failed, retrying: {}", error.toString());
            return true;
          });
      synced.add(informer.start().toCompletableFuture());
    }
    CompletableFuture.allOf(synced.toArray(CompletableFuture[]::new))
        .thenRun(
            () -> {
              LOG.debug(
                  "DelayedTaskQueues listed: queues not among them hold their tasks as missing");
              schedule.queueLimitsKnown();
            });
    long interval = STATUS_INTERVAL.toMillis();
    statusThread.scheduleWithFixedDelay(
        this::writeStatuses, interval, interval, TimeUnit.MILLISECONDS);
    return this;
  }

  static QueueRef refOf(DelayedTaskQueue queue) {
    return new QueueRef(queue.getMetadata().getNamespace(), queue.getMetadata().getName());
  }

  /**
   * What the queue's claims take: paused, else its rate (with the bucket's size) and concurrency.
   */
  public static QueueLimits limitsOf(DelayedTaskQueueSpec spec) {
    if (spec == null) {
      return QueueLimits.open(null, 0, null);
    }
    if (spec.paused()) {
      return QueueLimits.paused();
    }
    return QueueLimits.open(
        spec.getMaxDispatchesPerSecond(), spec.effectiveBurst(), spec.getMaxConcurrentDispatches());
  }

  /**
   * An Event on each task waiting in the queue (this instance leading), then the queue lets them
   * go.
   */
  private void released(QueueRef queue) {
    statusThread.execute(
        () -> {
          if (leading.getAsBoolean()) {
            try {
              schedule.waitingEntries(queue).keySet().forEach(id -> releases.accept(queue, id));
            } catch (ScheduleUnavailableException e) {
              LOG.warn(
                  "Could not list the tasks waiting in deleted queue {} for their Events: {}",
                  queue,
                  e.getMessage());
            }
          }
          schedule.queueLimits(queue, QueueLimits.RELEASED);
          Meters gone = meters.remove(queue);
          if (gone != null) {
            registry
                .find("delayedtask.queue.waiting")
                .tags("namespace", queue.namespace(), "queue", queue.name())
                .meters()
                .forEach(registry::remove);
            registry
                .find("delayedtask.queue.dispatches")
                .tags("namespace", queue.namespace(), "queue", queue.name())
                .meters()
                .forEach(registry::remove);
          }
        });
  }

  /** One pass: each queue's snapshot, its gauges, and its status where it changed. */
  void writeStatuses() {
    if (!leading.getAsBoolean()) {
      return;
    }
    for (SharedIndexInformer<DelayedTaskQueue> informer : informers) {
      for (DelayedTaskQueue queue : informer.getStore().list()) {
        try {
          writeStatus(queue);
        } catch (ScheduleUnavailableException e) {
          LOG.debug("Redis unavailable, queue statuses wait: {}", e.getMessage());
          return;
        } catch (KubernetesClientException e) {
          LOG.warn(
              "Could not write the status of DelayedTaskQueue {}/{}: {}",
              queue.getMetadata().getNamespace(),
              queue.getMetadata().getName(),
              e.getMessage());
        } catch (RuntimeException e) {
          LOG.warn(
              "Could not write the status of DelayedTaskQueue {}/{}",
              queue.getMetadata().getNamespace(),
              queue.getMetadata().getName(),
              e);
        }
      }
    }
  }

  private void writeStatus(DelayedTaskQueue queue) {
    QueueRef ref = refOf(queue);
    QueueCounts counts = schedule.queueCounts(ref);
    Meters queueMeters = meters.computeIfAbsent(ref, this::register);
    queueMeters.waiting().set(counts.waiting());
    queueMeters
        .dispatched()
        .set(Math.max(queueMeters.dispatched().get(), counts.dispatchedTotal()));
    DelayedTaskQueueStatus current = queue.getStatus();
    DelayedTaskQueueStatus desired = statusOf(queue, counts, current);
    if (Objects.equals(current, desired)) {
      return;
    }
    DelayedTaskQueue patch = new DelayedTaskQueue();
    patch.getMetadata().setName(queue.getMetadata().getName());
    patch.getMetadata().setNamespace(queue.getMetadata().getNamespace());
    patch.setStatus(desired);
    client
        .resources(DelayedTaskQueue.class)
        .inNamespace(ref.namespace())
        .resource(patch)
        .patchStatus();
  }

  /** The status a snapshot shows; a condition keeps its transition time while its status stays. */
  DelayedTaskQueueStatus statusOf(
      DelayedTaskQueue queue, QueueCounts counts, DelayedTaskQueueStatus current) {
    DelayedTaskQueueStatus status = new DelayedTaskQueueStatus();
    status.setPending(counts.pending());
    status.setWaiting(counts.waiting());
    status.setInFlight(counts.inFlight());
    status.setOldestWaitingDueTime(counts.oldestWaiting().map(Times::format).orElse(null));
    status.setDispatchedTotal(counts.dispatchedTotal());
    Long generation = queue.getMetadata().getGeneration();
    status.setObservedGeneration(generation);
    boolean paused = queue.getSpec() != null && queue.getSpec().paused();
    List<Condition> conditions = new ArrayList<>();
    conditions.add(
        condition(
            current,
            Condition.READY,
            "True",
            "Ready",
            "the operator applies this queue's pause and " + "limits to the tasks naming it",
            generation));
    conditions.add(
        condition(
            current,
            "Paused",
            paused ? "True" : "False",
            paused ? "Paused" : "Running",
            paused
                ? "spec.paused is true: none of the queue's tasks fires; those falling due wait"
                : "the queue's tasks fire within its limits",
            generation));
    status.setConditions(conditions);
    return status;
  }

  private Condition condition(
      DelayedTaskQueueStatus current,
      String type,
      String value,
      String reason,
      String message,
      Long generation) {
    String since = Times.format(clock.instant());
    if (current != null && current.getConditions() != null) {
      for (Condition before : current.getConditions()) {
        if (type.equals(before.getType()) && value.equals(before.getStatus())) {
          since = before.getLastTransitionTime();
        }
      }
    }
    return new Condition(type, value, reason, message, since, generation);
  }

  private Meters register(QueueRef queue) {
    Meters created = new Meters(new AtomicLong(), new AtomicLong());
    Gauge.builder("delayedtask.queue.waiting", created.waiting(), AtomicLong::get)
        .description(
            "Tasks of the queue that are due and held by it (paused, rate, concurrency, missing)")
        .tag("namespace", queue.namespace())
        .tag("queue", queue.name())
        .register(registry);
    FunctionCounter.builder("delayedtask.queue.dispatches", created.dispatched(), AtomicLong::get)
        .description(
            "Dispatches of the queue's tasks (Jobs created, status-only firings, delivery attempts)")
        .tag("namespace", queue.namespace())
        .tag("queue", queue.name())
        .register(registry);
    return created;
  }

  @Override
  public void close() {
    statusThread.shutdownNow();
    informers.forEach(SharedIndexInformer::close);
  }
}
