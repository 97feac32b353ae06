package io.delayedtask.operator;

import io.delayedtask.operator.config.OperatorConfig;
import io.delayedtask.operator.schedule.AsyncDueEntryHandler;
import io.delayedtask.operator.schedule.RedisSchedule;
import io.delayedtask.operator.schedule.SchedulePoller;
import io.delayedtask.operator.schedule.ScheduleUnavailableException;
import io.delayedtask.operator.schedule.TaskSchedule;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Builds the Redis schedule and its poller (implemented in schedule/). */
final class ScheduleWiring {
  private static final Logger LOG = LoggerFactory.getLogger(ScheduleWiring.class);

  /**
   * How long a stopping leader waits for its claims in flight to settle before it hands back the
   * rest and releases the Lease: well inside the pod's 30 s terminationGracePeriodSeconds.
   */
  static final Duration SETTLE_AT_MOST = Duration.ofSeconds(10);

  private ScheduleWiring() {}

  /** The schedule the configuration names. Lettuce connects lazily: Redis may still be down. */
  static TaskSchedule connect(OperatorConfig config) {
    return RedisSchedule.open(config);
  }

  /**
   * Starts the poller with this handler, claiming entries for {@code claimLease}
   * (DELAYEDTASK_CLAIM_LEASE_SECONDS); closing the result stops it. It starts when this instance
   * becomes the leader (or at once without leader election), so the claims in Redis are a
   * predecessor's: they go back to the due set first, rather than wait out their lease.
   */
  static AutoCloseable startPoller(
      TaskSchedule schedule, AsyncDueEntryHandler handler, Duration claimLease) {
    takeOverClaims(schedule);
    SchedulePoller poller =
        new SchedulePoller(
            schedule,
            handler,
            SchedulePoller.Settings.defaults()
                .withLease(claimLease)
                .withStopTimeout(SETTLE_AT_MOST));
    poller.start();
    return poller;
  }

  private static void takeOverClaims(TaskSchedule schedule) {
    try {
      int taken = schedule.requeueAllClaims();
      if (taken > 0) {
        LOG.info(
            "Took over {} claims of the previous leader: they fire now, not when their lease runs out",
            taken);
      }
    } catch (ScheduleUnavailableException e) {
      LOG.warn(
          "Could not take over the previous leader's claims (Redis unavailable); they return when their "
              + "lease runs out: {}",
          e.getMessage());
    }
  }
}
