package io.delayedtask.operator.sink;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Who gets a delivery slot, without a clock: requests that find none wait (an hour, never reached
 * here).
 */
class DeliverySlotsTest {
  private static final Duration WAIT = Duration.ofHours(1);

  private final List<DeliverySlots.Slot> held = new ArrayList<>();

  private boolean acquired(DeliverySlots slots, String host, String namespace) {
    int before = held.size();
    slots.acquire(host, namespace, WAIT, held::add, () -> {});
    return held.size() > before;
  }

  @Test
  void oneNamespaceHoldsAtMostHalfOfASharedHostsSlotsAndAnotherStillFindsOne() {
    try (DeliverySlots slots = new DeliverySlots(256, 32, 32)) {
      for (int i = 0; i < 16; i++) {
        assertThat(acquired(slots, "broker-ingress", "greedy")).as("slot " + (i + 1)).isTrue();
      }
      assertThat(acquired(slots, "broker-ingress", "greedy"))
          .as("the 17th of one namespace to one host waits")
          .isFalse();
      assertThat(acquired(slots, "other-host", "greedy"))
          .as("another host is another share")
          .isTrue();
      assertThat(acquired(slots, "broker-ingress", "modest"))
          .as("another namespace finds the host open")
          .isTrue();
      assertThat(slots.waiting()).isEqualTo(1);

      held.get(0).release();
      assertThat(slots.waiting())
          .as("a freed slot of its share lets the waiting request in")
          .isZero();
    }
  }

  @Test
  void aHostCapOfOneStillLetsOneRequestThrough() {
    try (DeliverySlots slots = new DeliverySlots(4, 1, 4)) {
      assertThat(acquired(slots, "h", "ns")).isTrue();
      assertThat(acquired(slots, "h", "other")).as("the host's own cap").isFalse();
    }
  }
}
