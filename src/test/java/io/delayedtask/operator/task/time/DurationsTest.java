package io.delayedtask.operator.task.time;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class DurationsTest {

  @ParameterizedTest(name = "{0} = {1} ms")
  @CsvSource({
    "500ms, 500",
    "45s, 45000",
    "10m, 600000",
    "1h30m, 5400000",
    "1.5h, 5400000",
    "2h45m30s250ms, 9930250",
    "0s, 0",
    "0.5s, 500",
    "PT10M, 600000",
    "pt1h30m, 5400000",
    "PT0.25S, 250",
    "P1DT1H, 90000000",
    "+10s, 10000",
  })
  void parsesGoAndIsoDurations(String text, long millis) throws Exception {
    assertThat(Durations.parse(text)).isEqualTo(Duration.ofMillis(millis));
  }

  @ParameterizedTest
  @ValueSource(strings = {"-5m", "-PT5M", "PT-5M"})
  void refusesNegativeDurations(String text) {
    assertThatThrownBy(() -> Durations.parse(text))
        .isInstanceOf(Durations.BadDuration.class)
        .hasMessageContaining("negative");
  }

  @ParameterizedTest
  @ValueSource(
      strings = {"", "10", "ten minutes", "10 m", "1d", "10M", "m10", "1.h", "P", "PTM", "10us"})
  void refusesWhatIsNotADuration(String text) {
    assertThatThrownBy(() -> Durations.parse(text)).isInstanceOf(Durations.BadDuration.class);
  }

  @ParameterizedTest
  @ValueSource(strings = {"99999999999999999999999h", "PT99999999999999999999H"})
  void refusesDurationsTooLongToRepresent(String text) {
    assertThatThrownBy(() -> Durations.parse(text)).isInstanceOf(Durations.BadDuration.class);
  }
}
