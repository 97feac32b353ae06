package io.delayedtask.operator.leader;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderElector;
import io.javaoperatorsdk.operator.Operator;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The two quick hand-offs of the Lease that JOSDK 5.2.3's leader election lacks.
 *
 * <ul>
 *   <li><b>Release</b> ({@link #release()}): a leader that stops on purpose (SIGTERM) clears the
 *       Lease's holder once its claims are settled and JOSDK has stopped, as client-go's {@code
 *       ReleaseOnCancel} does. JOSDK builds fabric8's elector with release-on-cancel off and offers
 *       no setting for it, so it is done here with the same write fabric8's own release makes (no
 *       holder, a 1 s duration), guarded by the Lease's resourceVersion: a standby that took over
 *       meanwhile is never undone.
 *   <li><b>Nudge</b> (a standby): fabric8's elector tries to acquire only every retry period plus a
 *       jitter of up to 1.2 of it (1.2 to 2.6 s with the default 4 s Lease), which would add up to
 *       2.6 s to every handover and failover. A standby therefore watches the Lease (one watch, no
 *       polling, no write) and has the elector try at once when the Lease is released, or at the
 *       instant it runs out when its leader stopped renewing it. The attempt is the elector's own
 *       ({@code tryAcquireOrRenew}, found by reflection since JOSDK keeps the elector private): the
 *       Lease alone still decides who leads, with its resourceVersion check. Should a later JOSDK
 *       or fabric8 lack it, the nudge is off (one log line) and the elector's own retries remain.
 * </ul>
 */
public final class LeaseHandover implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(LeaseHandover.class);

  /** After the Lease runs out by its record, a margin for the two hosts' clocks to agree it has. */
  private static final Duration AFTER_EXPIRY = Duration.ofMillis(20);

  /** When a nudge did not win the Lease and no newer state came, how soon to try again. */
  private static final Duration AGAIN = Duration.ofMillis(500);

  private final KubernetesClient client;
  private final String namespace;
  private final String name;
  private final String identity;
  private final Duration leaseDuration;
  private final BooleanSupplier leading;
  private final ScheduledExecutorService timer =
      Executors.newSingleThreadScheduledExecutor(
          runnable -> {
            Thread thread = new Thread(runnable, "lease-nudge");
            thread.setDaemon(true);
            return thread;
          });
  private volatile BooleanSupplier tryAcquire;
  private volatile boolean closed;
  private Watch watch;
  private ScheduledFuture<?> nudge;

  /**
   * @param leaseDuration this instance's lease duration: fabric8's elector judges a Lease run out
   *     by it
   * @param leading whether this instance leads now (then there is nothing to nudge)
   */
  public LeaseHandover(
      KubernetesClient client,
      String namespace,
      String name,
      String identity,
      Duration leaseDuration,
      BooleanSupplier leading) {
    this.client = Objects.requireNonNull(client);
    this.namespace = Objects.requireNonNull(namespace);
    this.name = Objects.requireNonNull(name);
    this.identity = Objects.requireNonNull(identity);
    this.leaseDuration = Objects.requireNonNull(leaseDuration);
    this.leading = Objects.requireNonNull(leading);
  }

  /**
   * Starts nudging the elector of this started operator. A no-op (logged) when the elector cannot
   * be reached: the elector's own retries then acquire the Lease, up to 2.2 retry periods later.
   */
  public synchronized void startNudging(Operator operator) {
    Optional<BooleanSupplier> elector = electorOf(operator);
    if (elector.isEmpty() || closed) {
      return;
    }
    tryAcquire = elector.get();
    watch();
  }

  /**
   * Clears the Lease's holder if this instance holds it. True when released; false when another
   * holds it, it is gone, or the write failed (then the Lease runs out as after a crash).
   */
  public boolean release() {
    try {
      Lease lease = client.leases().inNamespace(namespace).withName(name).get();
      if (lease == null
          || lease.getSpec() == null
          || !identity.equals(lease.getSpec().getHolderIdentity())) {
        return false;
      }
      ZonedDateTime now = ZonedDateTime.now(ZoneOffset.UTC);
      lease.getSpec().setHolderIdentity(null);
      lease.getSpec().setLeaseDurationSeconds(1);
      lease.getSpec().setAcquireTime(now);
      lease.getSpec().setRenewTime(now);
      client
          .resource(lease)
          .update(); // carries the resourceVersion read: a 409 if it changed since
      LOG.info("Released the leader Lease {}/{}: a standby takes over now", namespace, name);
      return true;
    } catch (KubernetesClientException e) {
      LOG.warn(
          "Could not release the leader Lease {}/{} ({}); a standby takes over when it runs out",
          namespace,
          name,
          e.getMessage());
      return false;
    }
  }

  private synchronized void watch() {
    if (closed) {
      return;
    }
    try {
      watch =
          client
              .leases()
              .inNamespace(namespace)
              .withName(name)
              .watch(
                  new Watcher<>() {
                    @Override
                    public void eventReceived(Action action, Lease lease) {
                      seen(action == Action.DELETED ? null : lease);
                    }

                    @Override
                    public void onClose(WatcherException cause) {
                      LOG.debug("The Lease watch closed ({}); watching again", cause.getMessage());
                      later(LeaseHandover.this::watch);
                    }
                  });
    } catch (KubernetesClientException e) {
      LOG.debug("Could not watch the Lease ({}); trying again", e.getMessage());
      later(this::watch);
    }
  }

  private synchronized void later(Runnable step) {
    if (!closed) {
      timer.schedule(step, AGAIN.toMillis(), TimeUnit.MILLISECONDS);
    }
  }

  /** The Lease as it is now (null: gone): when this standby should try to take it. */
  private synchronized void seen(Lease lease) {
    if (closed) {
      return;
    }
    if (nudge != null) {
      nudge.cancel(false);
    }
    if (leading.getAsBoolean()) {
      return;
    }
    String holder =
        lease == null || lease.getSpec() == null ? null : lease.getSpec().getHolderIdentity();
    if (identity.equals(holder)) {
      return;
    }
    Duration wait = Duration.ZERO;
    if (holder != null && !holder.isEmpty() && lease.getSpec().getRenewTime() != null) {
      ZonedDateTime expiry = lease.getSpec().getRenewTime().plus(leaseDuration).plus(AFTER_EXPIRY);
      wait = Duration.between(ZonedDateTime.now(ZoneOffset.UTC), expiry);
    }
    nudge = timer.schedule(this::tryNow, Math.max(0, wait.toMillis()), TimeUnit.MILLISECONDS);
  }

  private void tryNow() {
    if (closed || leading.getAsBoolean()) {
      return;
    }
    boolean won;
    try {
      won = tryAcquire.getAsBoolean();
    } catch (RuntimeException e) {
      won = false;
      LOG.debug("Trying for the Lease failed: {}", e.toString());
    }
    if (!won) {
      synchronized (this) {
        if (!closed && nudge != null && nudge.getDelay(TimeUnit.MILLISECONDS) <= 0) {
          nudge = timer.schedule(this::tryNow, AGAIN.toMillis(), TimeUnit.MILLISECONDS);
        }
      }
    }
  }

  /**
   * The elector's attempt to acquire (or renew) the Lease: {@code tryAcquireOrRenew}, on JOSDK's
   * private {@code LeaderElectionManager.leaderElector}, set once the operator has started.
   */
  static Optional<BooleanSupplier> electorOf(Operator operator) {
    try {
      Field managerField = Operator.class.getDeclaredField("leaderElectionManager");
      managerField.setAccessible(true);
      Object manager = managerField.get(operator);
      Field electorField = manager.getClass().getDeclaredField("leaderElector");
      electorField.setAccessible(true);
      Object elector = electorField.get(manager);
      if (!(elector instanceof LeaderElector)) {
        LOG.warn("No leader elector to nudge: a standby takes over at the elector's next retry");
        return Optional.empty();
      }
      Method attempt = LeaderElector.class.getDeclaredMethod("tryAcquireOrRenew");
      attempt.setAccessible(true);
      return Optional.of(
          () -> {
            try {
              return (Boolean) attempt.invoke(elector);
            } catch (ReflectiveOperationException e) {
              throw new IllegalStateException(e.getCause() != null ? e.getCause() : e);
            }
          });
    } catch (ReflectiveOperationException | RuntimeException e) {
      LOG.warn(
          "Cannot reach JOSDK's leader elector ({}): a standby takes over at the elector's next retry, up to "
              + "2.2 retry periods after the Lease is free",
          e.toString());
      return Optional.empty();
    }
  }

  @Override
  public synchronized void close() {
    closed = true;
    if (watch != null) {
      watch.close();
    }
    timer.shutdownNow();
  }
}
