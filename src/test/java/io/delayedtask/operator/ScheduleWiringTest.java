package io.delayedtask.operator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.delayedtask.operator.schedule.ClaimBatch;
import io.delayedtask.operator.schedule.ClaimedEntry;
import io.delayedtask.operator.schedule.Disposition;
import io.delayedtask.operator.schedule.ScheduleCounts;
import io.delayedtask.operator.schedule.TaskSchedule;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class ScheduleWiringTest {

  @Test
  void thePollerTakesOverThePredecessorsClaimsThenClaimsWithTheConfiguredLease() throws Exception {
    RecordingSchedule schedule = new RecordingSchedule();
    try (AutoCloseable poller = ScheduleWiring.startPoller(schedule,
        entry -> CompletableFuture.completedFuture(Disposition.acknowledge()),
        Duration.ofSeconds(7))) {
      await().atMost(Duration.ofSeconds(5)).until(() -> !schedule.leases.isEmpty());
    }
    assertThat(schedule.requeuedAll.get()).as("claims taken over once, before claiming").isEqualTo(1);
    assertThat(schedule.leases).containsOnly(Duration.ofSeconds(7));
  }

  /** Records what the poller asks of it; nothing is ever due. */
  private static final class RecordingSchedule implements TaskSchedule {
    final Queue<Duration> leases = new ConcurrentLinkedQueue<>();
    final AtomicInteger requeuedAll = new AtomicInteger();

    @Override public ClaimBatch claimDue(int max, Duration lease) {
      assertThat(requeuedAll.get()).isEqualTo(1);
      leases.add(lease);
      return new ClaimBatch(List.of(), Instant.EPOCH, Optional.empty());
    }
    @Override public int requeueAllClaims() {
      requeuedAll.incrementAndGet();
      return 0;
    }
    @Override public void schedule(String id, Instant due) { throw new UnsupportedOperationException(); }
    @Override public java.util.Set<String> repairAll(java.util.Map<String, java.time.Instant> dueById) {
      throw new UnsupportedOperationException();
    }
    @Override public void cancel(String id) { throw new UnsupportedOperationException(); }
    @Override public void acknowledgeAll(java.util.Collection<ClaimedEntry> entries) {
      throw new UnsupportedOperationException();
    }
    @Override public void release(ClaimedEntry entry, Instant retryAt) { throw new UnsupportedOperationException(); }
    @Override public ScheduleCounts counts() { throw new UnsupportedOperationException(); }
    @Override public Map<String, Instant> waitingEntries() { throw new UnsupportedOperationException(); }
    @Override public List<String> inFlightIds() { throw new UnsupportedOperationException(); }
    @Override public String serverIdentity() { throw new UnsupportedOperationException(); }
    @Override public void close() {}
  }
}
