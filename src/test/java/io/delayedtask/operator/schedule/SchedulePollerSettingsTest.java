package io.delayedtask.operator.schedule;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.delayedtask.operator.testing.UnusedSchedule;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class SchedulePollerSettingsTest {

  @Test
  void theOneRetryPolicyForAClaimRunsFromHalfASecondToThirtySeconds() {
    SchedulePoller poller =
        new SchedulePoller(
            new UnusedSchedule(),
            DueEntryHandler.blocking(entry -> Disposition.acknowledge()),
            SchedulePoller.Settings.defaults());
    assertThat(poller.backoff(1)).isEqualTo(Duration.ofMillis(500));
    assertThat(poller.backoff(7)).isEqualTo(Duration.ofSeconds(30));
  }

  @Test
  void retryBackoffDoublesPerAttemptUpToTheCap() {
    SchedulePoller poller =
        new SchedulePoller(
            new UnusedSchedule(),
            DueEntryHandler.blocking(entry -> Disposition.acknowledge()),
            SchedulePoller.Settings.defaults()
                .withRetry(Duration.ofMillis(100), Duration.ofSeconds(1)));
    assertThat(poller.backoff(1)).isEqualTo(Duration.ofMillis(100));
    assertThat(poller.backoff(2)).isEqualTo(Duration.ofMillis(200));
    assertThat(poller.backoff(4)).isEqualTo(Duration.ofMillis(800));
    assertThat(poller.backoff(5)).isEqualTo(Duration.ofSeconds(1));
    assertThat(poller.backoff(1_000)).isEqualTo(Duration.ofSeconds(1));
  }

  @Test
  void badSettingsNameTheSetting() {
    SchedulePoller.Settings defaults = SchedulePoller.Settings.defaults();
    assertThatThrownBy(() -> defaults.withBatchSize(0))
        .hasMessageContaining("batchSize must be from 1 to 1000");
    assertThatThrownBy(() -> defaults.withBatchSize(1001)).hasMessageContaining("batchSize");
    assertThatThrownBy(() -> defaults.withLease(Duration.ZERO))
        .hasMessageContaining("lease must be a positive duration");
    assertThatThrownBy(() -> defaults.withMaxIdleSleep(Duration.ofSeconds(-1)))
        .hasMessageContaining("maxIdleSleep");
  }
}
