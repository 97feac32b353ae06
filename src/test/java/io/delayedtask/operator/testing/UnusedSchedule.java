package io.delayedtask.operator.testing;

import io.delayedtask.operator.schedule.ClaimBatch;
import io.delayedtask.operator.schedule.ClaimedEntry;
import io.delayedtask.operator.schedule.ScheduleCounts;
import io.delayedtask.operator.schedule.TaskSchedule;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A schedule for unit tests that must not touch one: every call fails, so a test that reaches Redis
 * without meaning to says so. Extend it to answer the calls a test does mean.
 */
public class UnusedSchedule implements TaskSchedule {
  @Override
  public void schedule(String id, Instant due) {
    throw unused();
  }

  @Override
  public Set<String> repairAll(Map<String, Instant> dueById) {
    throw unused();
  }

  @Override
  public void cancel(String id) {
    throw unused();
  }

  @Override
  public ClaimBatch claimDue(int max, Duration lease) {
    throw unused();
  }

  @Override
  public void acknowledgeAll(Collection<ClaimedEntry> entries) {
    throw unused();
  }

  @Override
  public void release(ClaimedEntry entry, Instant retryAt) {
    throw unused();
  }

  @Override
  public int requeueAllClaims() {
    throw unused();
  }

  @Override
  public ScheduleCounts counts() {
    throw unused();
  }

  @Override
  public Map<String, Instant> waitingEntries() {
    throw unused();
  }

  @Override
  public List<String> inFlightIds() {
    throw unused();
  }

  @Override
  public String serverIdentity() {
    throw unused();
  }

  @Override
  public void close() {}

  private static UnsupportedOperationException unused() {
    return new UnsupportedOperationException("this test does not use the schedule");
  }
}
