package io.delayedtask.operator.schedule;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import org.junit.jupiter.api.Test;

class ScheduleScoresTest {

  @Test
  void scoresRoundUpToTheNextMillisecondSoNothingIsDueEarly() {
    assertThat(RedisSchedule.score(Instant.parse("2026-12-03T07:00:00Z")))
        .isEqualTo(1796281200000L);
    assertThat(RedisSchedule.score(Instant.parse("2026-12-03T07:00:00.001Z")))
        .isEqualTo(1796281200001L);
    assertThat(RedisSchedule.score(Instant.parse("2026-12-03T07:00:00.000001Z")))
        .isEqualTo(1796281200001L);
    assertThat(RedisSchedule.score(Instant.parse("2026-12-03T07:00:00.000999999Z")))
        .isEqualTo(1796281200001L);
  }
}
