package io.delayedtask.operator.fire;

import io.delayedtask.operator.reconcile.ScheduleKeeper;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderCallbacks;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The leader's duties: the poller that fires due entries and the resync of the schedule. Started
 * when this instance becomes leader (or at once without leader election), stopped the moment it
 * stops leading. A second leader that has not stopped yet cannot double-fire: claims are atomic in
 * Redis and Job names deterministic.
 */
public class Firing implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Firing.class);

  private final ScheduleKeeper keeper;
  private final Supplier<AutoCloseable> pollerStarter;
  private AutoCloseable poller;

  /** {@code pollerStarter} starts the schedule's poller and returns what stops it. */
  public Firing(ScheduleKeeper keeper, Supplier<AutoCloseable> pollerStarter) {
    this.keeper = keeper;
    this.pollerStarter = pollerStarter;
  }

  public synchronized void start() {
    if (poller != null) {
      return;
    }
    LOG.info("Starting to fire due tasks");
    keeper.activate();
    poller = pollerStarter.get();
  }

  public synchronized void stop() {
    if (poller == null) {
      return;
    }
    LOG.info("Stopping firing");
    try {
      poller.close();
    } catch (Exception e) {
      LOG.warn("Stopping the poller failed: {}", e.toString());
    }
    poller = null;
    keeper.deactivate();
  }

  public synchronized boolean isFiring() {
    return poller != null;
  }

  /** Leader election callbacks: lead → fire; stop leading → stop firing. */
  public LeaderCallbacks leaderCallbacks() {
    return new LeaderCallbacks(this::start, this::stop,
        leader -> LOG.info("The leader is now {}", leader));
  }

  @Override
  public void close() {
    stop();
  }
}
