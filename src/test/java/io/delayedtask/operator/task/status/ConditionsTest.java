package io.delayedtask.operator.task.status;

import static org.assertj.core.api.Assertions.assertThat;

import io.delayedtask.operator.api.v1alpha1.Condition;
import io.delayedtask.operator.api.v1alpha1.DelayedTaskStatus;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The CRD's status.conditions is a map list keyed by type: what the operator writes has one per
 * type.
 */
class ConditionsTest {
  private static final Instant NOW = Instant.parse("2026-12-04T12:00:00Z");

  @Test
  void aCopyKeepsTheFirstConditionOfEachTypeAndDropsTypelessOnes() {
    DelayedTaskStatus status = new DelayedTaskStatus();
    status.setConditions(
        List.of(
            new Condition("Ready", "True", "Scheduled", "first", "2026-12-01T00:00:00Z", 1L),
            new Condition(null, "True", "Odd", "no type", "2026-12-01T00:00:00Z", 1L),
            new Condition("Ready", "False", "Stale", "second", "2026-12-02T00:00:00Z", 1L),
            new Condition("Scheduled", "True", "Scheduled", "due", "2026-12-01T00:00:00Z", 1L)));

    DelayedTaskStatus copy = Conditions.copy(status);

    assertThat(copy.getConditions())
        .extracting(Condition::getType, Condition::getMessage)
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple("Ready", "first"),
            org.assertj.core.groups.Tuple.tuple("Scheduled", "due"));
  }

  @Test
  void settingAConditionTwiceLeavesOneOfItsType() {
    DelayedTaskStatus status = new DelayedTaskStatus();
    Conditions.set(status, Condition.READY, true, "Scheduled", "waits", NOW, 1L);
    Conditions.set(status, Condition.READY, false, "Failed", "failed", NOW.plusSeconds(1), 2L);
    Conditions.set(status, Condition.SCHEDULED, true, "Scheduled", "waits", NOW, 1L);

    assertThat(status.getConditions())
        .extracting(Condition::getType)
        .doesNotHaveDuplicates()
        .containsExactlyInAnyOrder(Condition.READY, Condition.SCHEDULED);
    assertThat(Conditions.find(status, Condition.READY))
        .get()
        .extracting(Condition::getStatus)
        .isEqualTo("False");
  }
}
