package io.delayedtask.operator.leader;

import io.fabric8.kubernetes.client.extended.leaderelection.LeaderCallbacks;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The leader's duties: the poller that claims due entries and hands them to the reconciler ({@link
 * DueClaims}), and the resync of the schedule ({@link ScheduleKeeper}). Started when this instance
 * becomes leader (or at once without leader election), stopped the moment it stops leading. A
 * second leader that has not stopped yet cannot double-fire: claims are atomic in Redis, Job names
 * deterministic, and every status write carries the resourceVersion it was decided from.
 */
public class Leadership implements AutoCloseable, MeterBinder {
  private static final Logger LOG = LoggerFactory.getLogger(Leadership.class);

  private final ScheduleKeeper keeper;
  private final DueClaims claims;
  private final Supplier<AutoCloseable> pollerStarter;

  /** The running poller (once started), or null when not leading. */
  private CompletableFuture<AutoCloseable> poller;

  /** Cleared first thing when leadership ends, before the poller drains its claims. */
  private volatile boolean active;

  /** {@code pollerStarter} starts the schedule's poller and returns what stops it. */
  public Leadership(
      ScheduleKeeper keeper, DueClaims claims, Supplier<AutoCloseable> pollerStarter) {
    this.keeper = keeper;
    this.claims = claims;
    this.pollerStarter = pollerStarter;
  }

  /**
   * Returns at once, since JOSDK handles no event until the leader-election callback that calls
   * this returns (LeaderElectionManager): the poller starts on a thread of its own (taking over the
   * claims in Redis and subscribing to wake-ups cost round trips, seconds on a cold connection),
   * the resync runs on the keeper's thread.
   */
  public synchronized void start() {
    if (poller != null) {
      return;
    }
    LOG.info("Starting to fire due tasks");
    active = true;
    poller =
        CompletableFuture.supplyAsync(
            pollerStarter,
            runnable -> {
              Thread thread = new Thread(runnable, "poller-start");
              thread.setDaemon(true);
              thread.start();
            });
    poller.whenComplete(
        (started, error) -> {
          if (error != null) {
            LOG.error("Could not start the poller: due tasks are not claimed", error);
          }
        });
    keeper.activate();
  }

  /**
   * The graceful end of leading (SIGTERM, a rolling update): stop claiming, and let the claims
   * handed over settle while this instance still counts as leading, so the reconciles that fire
   * them finish instead of handing them back half done (the poller waits for them, up to its stop
   * timeout); then {@link #stop()}, which hands back whatever is left. The Lease is released after
   * this (DelayedTaskOperator), so the next leader starts from claims that are settled.
   */
  public void handOver() {
    if (!active) {
      return;
    }
    LOG.info("Handing over: no new claims; waiting for the claims in flight to settle");
    stopPoller();
    stop();
  }

  public void stop() {
    active = false; // unsynchronized: reconciles still running must see it at once
    claims.handBackAll(); // the next leader fires them at their due time, not after their lease
    stopPoller();
  }

  private synchronized void stopPoller() {
    if (poller == null) {
      return;
    }
    LOG.info("Stopping firing");
    try {
      poller.join().close();
    } catch (Exception e) {
      LOG.warn("Stopping the poller failed: {}", e.toString());
    }
    poller = null;
    keeper.deactivate();
  }

  /** True while this instance leads (or leader election is off) and fires due entries. */
  public boolean isFiring() {
    return active;
  }

  /**
   * delayedtask_leader: 1 on the instance that fires (summed over replicas: 1, or 0 when none
   * does).
   */
  @Override
  public void bindTo(MeterRegistry registry) {
    Gauge.builder("delayedtask.leader", this, f -> f.isFiring() ? 1 : 0)
        .description(
            "1 while this instance leads and fires due tasks (or leader election is off), else 0")
        .register(registry);
  }

  /**
   * Leader election callbacks: lead → fire; stop leading → stop firing, then {@code
   * afterLosingLease} (in production: end the process, so Kubernetes restarts it as a clean
   * standby).
   */
  public LeaderCallbacks leaderCallbacks(Runnable afterLosingLease) {
    return new LeaderCallbacks(
        this::start,
        () -> {
          stop();
          afterLosingLease.run();
        },
        leader -> LOG.info("The leader is now {}", leader));
  }

  @Override
  public void close() {
    stop();
  }
}
