package io.delayedtask.operator.task.cache;

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
    task.getMetadata()
        .setManagedFields(
            List.of(
                new ManagedFieldsEntryBuilder()
                    .withManager("kubectl")
                    .withOperation("Update")
                    .build()));

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
    small
        .getSpec()
        .setPayload(Map.of("k", "v".repeat(CachedObjects.KEEP_UP_TO_CHARS - 1 - templateChars)));
    DelayedTask large = Tasks.statusOnly("ns", "large", DUE);
    large
        .getSpec()
        .setPayload(Map.of("k", "v".repeat(CachedObjects.KEEP_UP_TO_CHARS - templateChars)));
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
  void
      largeAnnotationsCaCertsAndCeOverridesCountAndAreNotKeptButSmallAnnotationsAndArgoCdsMarkAre() {
    LeanItemStore<DelayedTask> store = LeanItemStore.forTasks();
    String big = "x".repeat(CachedObjects.KEEP_UP_TO_CHARS + 1);
    DelayedTask annotated = Tasks.statusOnly("ns", "annotated", DUE);
    annotated
        .getMetadata()
        .setAnnotations(
            new HashMap<>(
                Map.of(
                    "kubectl.kubernetes.io/last-applied-configuration", big,
                    "argocd.argoproj.io/tracking-id", "app:delayedtask.io/DelayedTask:ns/annotated",
                    "team", "orders")));
    DelayedTask certs = Tasks.statusOnly("ns", "certs", DUE);
    io.delayedtask.operator.api.v1alpha1.Destination sink =
        new io.delayedtask.operator.api.v1alpha1.Destination();
    sink.setUri("https://hooks.example.com/x");
    sink.setCaCerts(big);
    certs.getSpec().setSink(sink);
    DelayedTask overrides = Tasks.statusOnly("ns", "overrides", DUE);
    overrides
        .getSpec()
        .setCeOverrides(new io.delayedtask.operator.api.v1alpha1.CeOverrides(Map.of("big", big)));
    DelayedTask manySmall = Tasks.statusOnly("ns", "many", DUE);
    Map<String, String> small = new HashMap<>();
    for (int i = 0; i < 100; i++) {
      small.put("a" + i, "v".repeat(400));
    }
    manySmall.getMetadata().setAnnotations(small);

    for (DelayedTask task : List.of(annotated, certs, overrides, manySmall)) {
      store.put(store.getKey(task), task);
    }

    DelayedTask kept = store.get("ns/annotated");
    assertThat(CachedObjects.isTrimmed(kept)).isTrue();
    assertThat(kept.getMetadata().getAnnotations())
        .doesNotContainKey("kubectl.kubernetes.io/last-applied-configuration")
        .containsEntry(
            "argocd.argoproj.io/tracking-id", "app:delayedtask.io/DelayedTask:ns/annotated")
        .containsEntry("team", "orders");
    assertThat(CachedObjects.isTrimmed(store.get("ns/certs"))).isTrue();
    assertThat(store.get("ns/certs").getSpec().getSink().getCaCerts()).isNull();
    assertThat(store.get("ns/certs").getSpec().getSink().getUri())
        .isEqualTo("https://hooks.example.com/x");
    assertThat(CachedObjects.isTrimmed(store.get("ns/overrides"))).isTrue();
    assertThat(store.get("ns/overrides").getSpec().getCeOverrides()).isNull();
    DelayedTask many = store.get("ns/many");
    assertThat(CachedObjects.isTrimmed(many)).isTrue();
    long annotationChars =
        many.getMetadata().getAnnotations().entrySet().stream()
            .mapToLong(e -> e.getKey().length() + e.getValue().length())
            .sum();
    assertThat(annotationChars).isLessThanOrEqualTo(CachedObjects.KEEP_ANNOTATION_CHARS + 100);
  }

  @Test
  void aJobIsKeptWithoutItsPodTemplateAndPayloadAnnotationsButWithItsFiringAnnotations() {
    LeanItemStore<Job> store = LeanItemStore.forJobs();
    Map<String, String> annotations =
        new HashMap<>(
            Map.of(
                "delayedtask.io/payload.order", "x".repeat(4096),
                "delayedtask.io/fired-time", "2026-12-03T07:00:00.012Z",
                "team", "a"));
    Job job =
        new JobBuilder()
            .withNewMetadata()
            .withNamespace("ns")
            .withName("j")
            .withAnnotations(annotations)
            .endMetadata()
            .withNewSpec()
            .withTemplate(Tasks.busyboxJob().getSpec().getTemplate())
            .endSpec()
            .withNewStatus()
            .withSucceeded(1)
            .endStatus()
            .build();

    store.put(store.getKey(job), job);

    Job kept = store.get("ns/j");
    assertThat(kept.getSpec().getTemplate()).isNull();
    assertThat(kept.getMetadata().getAnnotations())
        .containsOnlyKeys("delayedtask.io/fired-time", "team");
    assertThat(kept.getStatus().getSucceeded()).isEqualTo(1);
  }
}
