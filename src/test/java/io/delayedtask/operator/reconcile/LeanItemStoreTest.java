package io.delayedtask.operator.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.testing.Tasks;
import io.fabric8.kubernetes.api.model.ManagedFieldsEntryBuilder;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

class LeanItemStoreTest {

  @Test
  void keepsTasksWithoutTheirManagedFieldsUnderTheInformersKey() {
    LeanItemStore<DelayedTask> store = new LeanItemStore<>();
    DelayedTask task = Tasks.statusOnly("ns", "t", Instant.parse("2026-12-03T07:00:00Z"));
    task.getMetadata().setManagedFields(List.of(new ManagedFieldsEntryBuilder().withManager("kubectl")
        .withOperation("Update").build()));

    store.put(store.getKey(task), task);

    DelayedTask kept = store.get("ns/t");
    assertThat(kept.getMetadata().getName()).isEqualTo("t");
    assertThat(kept.getSpec().getRunAt()).isEqualTo("2026-12-03T07:00:00Z");
    assertThat(kept.getMetadata().getManagedFields()).isNullOrEmpty();
  }
}
