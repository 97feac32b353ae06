package io.delayedtask.operator.task;

import static org.assertj.core.api.Assertions.assertThat;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.testing.Tasks;
import io.fabric8.kubernetes.api.model.ManagedFieldsEntryBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobBuilder;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class LeanItemStoreTest {
  private static final Instant DUE = Instant.parse("2026-12-03T07:00:00Z");

  @Test
  void keepsTasksWithoutTheirManagedFieldsUnderTheInformersKey() {
    LeanItemStore<DelayedTask> store = LeanItemStore.forTasks();
    DelayedTask task = Tasks.statusOnly("ns", "t", DUE);
    task.getMetadata().setManagedFields(List.of(new ManagedFieldsEntryBuilder().withManager("kubectl")
        .withOperation("Update").build()));

    store.put(store.getKey(task), task);

    DelayedTask kept = store.get("ns/t");
    assertThat(kept.getMetadata().getName()).isEqualTo("t");
    assertThat(kept.getSpec().getRunAt()).isEqualTo("2026-12-03T07:00:00Z");
    assertThat(kept.getMetadata().getManagedFields()).isNullOrEmpty();
  }

  @Test
  void aTaskUpToTheLimitKeepsItsLargeFieldsAndALargerOneIsKeptWithoutThemAndMarked() {
    LeanItemStore<DelayedTask> store = LeanItemStore.forTasks();
    DelayedTask small = Tasks.statusOnly("ns", "small", DUE);
    small.getSpec().setJobTemplate(Tasks.busyboxJob());
    int templateChars = Serialization.asJson(Tasks.busyboxJob()).length();
    // Key and value and template: exactly the limit.
    small.getSpec().setPayload(Map.of("k", "v".repeat(CachedObjects.KEEP_UP_TO_CHARS - 1 - templateChars)));
    DelayedTask large = Tasks.statusOnly("ns", "large", DUE);
    large.getSpec().setPayload(Map.of("k", "v".repeat(CachedObjects.KEEP_UP_TO_CHARS - templateChars)));
    large.getSpec().setJobTemplate(Tasks.busyboxJob());
    DelayedTask largeData = Tasks.statusOnly("ns", "data", DUE);
    largeData.getSpec().setData("d".repeat(CachedObjects.KEEP_UP_TO_CHARS + 1));

    store.put(store.getKey(small), small);
    store.put(store.getKey(large), large);
    store.put(store.getKey(largeData), largeData);

    assertThat(CachedObjects.isTrimmed(store.get("ns/small"))).isFalse();
    assertThat(store.get("ns/small").getSpec().getPayload()).hasSize(1);
    assertThat(store.get("ns/small").getSpec().getJobTemplate()).isNotNull();
    for (String name : List.of("large", "data")) {
      DelayedTask kept = store.get("ns/" + name);
      assertThat(CachedObjects.isTrimmed(kept)).as(name).isTrue();
      assertThat(kept.getSpec().getPayload()).isNull();
      assertThat(kept.getSpec().getData()).isNull();
      assertThat(kept.getSpec().getJobTemplate()).isNull();
      assertThat(kept.getSpec().getRunAt()).isEqualTo(DUE.toString());
    }
  }

  @Test
  void aJobIsKeptWithoutItsPodTemplateAndPayloadAnnotationsButWithItsFiringAnnotations() {
    LeanItemStore<Job> store = LeanItemStore.forJobs();
    Map<String, String> annotations = new HashMap<>(Map.of(
        "delayedtask.io/payload.order", "x".repeat(4096),
        "delayedtask.io/fired-time", "2026-12-03T07:00:00.012Z",
        "team", "a"));
    Job job = new JobBuilder().withNewMetadata().withNamespace("ns").withName("j").withAnnotations(annotations)
        .endMetadata().withNewSpec().withTemplate(Tasks.busyboxJob().getSpec().getTemplate()).endSpec()
        .withNewStatus().withSucceeded(1).endStatus().build();

    store.put(store.getKey(job), job);

    Job kept = store.get("ns/j");
    assertThat(kept.getSpec().getTemplate()).isNull();
    assertThat(kept.getMetadata().getAnnotations()).containsOnlyKeys("delayedtask.io/fired-time", "team");
    assertThat(kept.getStatus().getSucceeded()).isEqualTo(1);
  }
}
