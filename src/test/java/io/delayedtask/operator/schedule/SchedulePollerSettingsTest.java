package io.delayedtask.operator.schedule;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class SchedulePollerSettingsTest {

  @Test
  void retryBackoffDoublesPerAttemptUpToTheCap() {
    SchedulePoller poller = new SchedulePoller(new NoSchedule(), entry -> Disposition.acknowledge(),
        SchedulePoller.Settings.defaults().withRetry(Duration.ofMillis(100), Duration.ofSeconds(1)));
    assertThat(poller.backoff(1)).isEqualTo(Duration.ofMillis(100));
    assertThat(poller.backoff(2)).isEqualTo(Duration.ofMillis(200));
    assertThat(poller.backoff(4)).isEqualTo(Duration.ofMillis(800));
    assertThat(poller.backoff(5)).isEqualTo(Duration.ofSeconds(1));
    assertThat(poller.backoff(1_000)).isEqualTo(Duration.ofSeconds(1));
  }

  @Test
  void badSettingsNameTheSetting() {
    SchedulePoller.Settings defaults = SchedulePoller.Settings.defaults();
    assertThatThrownBy(() -> defaults.withBatchSize(0)).hasMessageContaining("batchSize must be from 1 to 1000");
    assertThatThrownBy(() -> defaults.withBatchSize(1001)).hasMessageContaining("batchSize");
    assertThatThrownBy(() -> defaults.withWorkers(0)).hasMessageContaining("workers");
    assertThatThrownBy(() -> defaults.withLease(Duration.ZERO)).hasMessageContaining("lease must be a positive duration");
    assertThatThrownBy(() -> defaults.withMaxIdleSleep(Duration.ofSeconds(-1))).hasMessageContaining("maxIdleSleep");
  }

  /** A schedule that is never called: these tests only exercise settings and arithmetic. */
  private static final class NoSchedule implements TaskSchedule {
    @Override public void schedule(String id, java.time.Instant due) { throw new UnsupportedOperationException(); }
    @Override public java.util.Set<String> repairAll(java.util.Map<String, java.time.Instant> dueById) {
      throw new UnsupportedOperationException();
    }
    @Override public void cancel(String id) { throw new UnsupportedOperationException(); }
    @Override public int requeueAllClaims() { throw new UnsupportedOperationException(); }
    @Override public ClaimBatch claimDue(int max, Duration lease) { throw new UnsupportedOperationException(); }
    @Override public void acknowledge(ClaimedEntry entry) { throw new UnsupportedOperationException(); }
    @Override public void release(ClaimedEntry entry, java.time.Instant retryAt) { throw new UnsupportedOperationException(); }
    @Override public int requeueExpiredClaims() { throw new UnsupportedOperationException(); }
    @Override public java.util.Optional<java.time.Instant> earliestDue() { throw new UnsupportedOperationException(); }
    @Override public ScheduleCounts counts() { throw new UnsupportedOperationException(); }
    @Override public java.util.Map<String, java.time.Instant> waitingEntries() { throw new UnsupportedOperationException(); }
    @Override public java.util.List<String> inFlightIds() { throw new UnsupportedOperationException(); }
    @Override public String serverIdentity() { throw new UnsupportedOperationException(); }
    @Override public java.time.Instant serverTime() { throw new UnsupportedOperationException(); }
    @Override public void close() {}
  }
}
