package io.delayedtask.operator.schedule;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lettuce.core.cluster.SlotHash;
import java.util.HashSet;
import java.util.Set;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class ScheduleKeysTest {

  @Test
  void oneShardUsesTheSimpleLayout() {
    ScheduleKeys keys = new ScheduleKeys("delayedtask", 1);
    assertThat(keys.due(0)).isEqualTo("delayedtask:{0}:due");
    assertThat(keys.inFlight(0)).isEqualTo("delayedtask:{0}:inflight");
    assertThat(keys.claimed(0)).isEqualTo("delayedtask:{0}:claimed");
    assertThat(keys.tokens(0)).isEqualTo("delayedtask:{0}:tokens");
    assertThat(keys.claimSequence(0)).isEqualTo("delayedtask:{0}:claimseq");
    assertThat(keys.wakeupChannel()).isEqualTo("delayedtask:wakeup");
    assertThat(keys.shardOf("ns/name/uid")).isZero();
  }

  @Test
  void theShardOfAnIdIsStableAndInRange() {
    ScheduleKeys keys = new ScheduleKeys("p", 7);
    // CRC32("ns/name/uid") = 0x70800E26; a change here would orphan entries written by older
    // versions.
    assertThat(keys.shardOf("ns/name/uid"))
        .isEqualTo((int) (Integer.toUnsignedLong(0x70800E26) % 7))
        .isEqualTo(new ScheduleKeys("other", 7).shardOf("ns/name/uid"));
    assertThat(
            IntStream.range(0, 1000)
                .map(i -> keys.shardOf("id-" + i))
                .distinct()
                .sorted()
                .toArray())
        .containsExactly(0, 1, 2, 3, 4, 5, 6);
  }

  @Test
  void eachShardHashesIntoItsOwnEqualPartOfTheSlotSpace() {
    for (int shards = 1; shards <= 32; shards++) {
      ScheduleKeys keys = new ScheduleKeys("delayedtask", shards);
      Set<Integer> slots = new HashSet<>();
      for (int shard = 0; shard < shards; shard++) {
        int slot = SlotHash.getSlot(keys.due(shard));
        assertThat(SlotHash.getSlot(keys.inFlight(shard))).isEqualTo(slot);
        assertThat(SlotHash.getSlot(keys.claimed(shard))).isEqualTo(slot);
        assertThat(SlotHash.getSlot(keys.tokens(shard))).isEqualTo(slot);
        assertThat(SlotHash.getSlot(keys.claimSequence(shard))).isEqualTo(slot);
        assertThat(slot)
            .isGreaterThanOrEqualTo(shard * SlotHash.SLOT_COUNT / shards)
            .isLessThan((shard + 1) * SlotHash.SLOT_COUNT / shards);
        slots.add(slot);
      }
      assertThat(slots).hasSize(shards);
    }
  }

  @Test
  void badArgumentsAreRejected() {
    assertThatThrownBy(() -> new ScheduleKeys("a{b}", 1)).hasMessageContaining("without braces");
    assertThatThrownBy(() -> new ScheduleKeys("p", 0))
        .hasMessageContaining("shards must be from 1 to 1024");
  }
}
