package io.delayedtask.operator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.delayedtask.operator.schedule.ClaimBatch;
import io.delayedtask.operator.schedule.Disposition;
import io.delayedtask.operator.testing.UnusedSchedule;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

class ScheduleWiringTest {

  @Test
  void thePollerTakesOverThePredecessorsClaimsThenClaimsWithTheConfiguredLease() throws Exception {
    RecordingSchedule schedule = new RecordingSchedule();
    try (AutoCloseable poller =
        ScheduleWiring.startPoller(
            schedule,
            entry -> CompletableFuture.completedFuture(Disposition.acknowledge()),
            Duration.ofSeconds(7))) {
      await("a first claim")
          .atMost(Duration.ofSeconds(5))
          .until(() -> schedule.calls.stream().anyMatch(call -> call.startsWith("claimDue")));
    }
    // The poller's thread only records; every check is made here, on the test thread.
    List<String> calls = List.copyOf(schedule.calls);
    // The poller subscribes to wake-ups as it starts, before its loop claims: so the take-over is
    // seen to come before the poller starts, not merely to win a race with its first claim.
    assertThat(calls)
        .as("claims taken over once, before the poller starts")
        .startsWith("requeueAllClaims", "onWakeup");
    assertThat(calls.subList(2, calls.size()))
        .as("then only claims, each with the configured lease")
        .isNotEmpty()
        .containsOnly("claimDue(lease=PT7S)");
  }

  /** Records, in order, what the poller asks of it; nothing is ever due. */
  private static final class RecordingSchedule extends UnusedSchedule {
    final List<String> calls = new CopyOnWriteArrayList<>();

    @Override
    public ClaimBatch claimDue(int max, Duration lease) {
      calls.add("claimDue(lease=" + lease + ")");
      return new ClaimBatch(List.of(), Instant.EPOCH, Optional.empty());
    }

    @Override
    public AutoCloseable onWakeup(Consumer<Instant> listener) {
      calls.add("onWakeup");
      return () -> {};
    }

    @Override
    public int requeueAllClaims() {
      calls.add("requeueAllClaims");
      return 0;
    }
  }
}
