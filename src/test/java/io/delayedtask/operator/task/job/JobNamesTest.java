package io.delayedtask.operator.task.job;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.regex.Pattern;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.CharRange;
import net.jqwik.api.constraints.Chars;
import net.jqwik.api.constraints.StringLength;
import org.junit.jupiter.api.Test;

class JobNamesTest {
  private static final Pattern DNS_LABEL = Pattern.compile("[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?");
  private static final Pattern LABEL_VALUE =
      Pattern.compile("(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?");
  private static final Instant DUE = Instant.parse("2026-12-03T07:00:00Z");

  @Test
  void isTheTaskNameAndEightHexCharacters() {
    assertThat(JobNames.jobName("nightly-report", "uid-1", DUE))
        .matches("nightly-report-[0-9a-f]{8}");
  }

  @Test
  void isDeterministicInUidAndDueTime() {
    String name = JobNames.jobName("t", "uid-1", DUE);
    assertThat(JobNames.jobName("t", "uid-1", DUE)).isEqualTo(name);
    assertThat(JobNames.jobName("t", "uid-2", DUE)).isNotEqualTo(name);
    assertThat(JobNames.jobName("t", "uid-1", DUE.plusMillis(1))).isNotEqualTo(name);
  }

  @Test
  void shortensLongTaskNamesToSixtyThreeCharacters() {
    String longName = "a".repeat(52) + "-b-" + "c".repeat(100);
    String name = JobNames.jobName(longName, "uid", DUE);
    assertThat(name).hasSize(63).startsWith("a".repeat(52) + "-b-").matches(DNS_LABEL);
  }

  @Test
  void neverLeavesADashBeforeTheHash() {
    String name = JobNames.jobName("a".repeat(53) + "-" + "b".repeat(20), "uid", DUE);
    assertThat(name).matches("a{53}-[0-9a-f]{8}");
  }

  @Test
  void taskLabelValueIsTheNameWhenItFits() {
    assertThat(JobNames.taskLabelValue("my.task-1")).isEqualTo("my.task-1");
    assertThat(JobNames.taskLabelValue("x".repeat(63))).isEqualTo("x".repeat(63));
  }

  @Test
  void taskLabelValueIsShortenedLikeTheJobName() {
    String value = JobNames.taskLabelValue("x".repeat(200));
    assertThat(value).hasSize(63).matches("x{54}-[0-9a-f]{8}").matches(LABEL_VALUE);
    assertThat(JobNames.taskLabelValue("x".repeat(199) + "y")).isNotEqualTo(value);
  }

  /** Any DNS subdomain task name (up to 253 characters, with dots) gives a valid Job name. */
  @Property(tries = 300)
  void alwaysAValidDnsLabel(
      @ForAll
          @StringLength(min = 1, max = 253)
          @CharRange(from = 'a', to = 'z')
          @Chars({'-', '.', '0', '9'})
          String raw,
      @ForAll long millis) {
    String taskName = "t" + raw.substring(0, Math.min(raw.length(), 251)) + "0";
    Instant due = Instant.ofEpochMilli(Math.floorMod(millis, 253402300799999L));
    assertThat(JobNames.jobName(taskName, "uid", due))
        .matches(DNS_LABEL)
        .hasSizeLessThanOrEqualTo(63);
    assertThat(JobNames.taskLabelValue(taskName)).matches(LABEL_VALUE).hasSizeLessThanOrEqualTo(63);
  }
}
