package io.delayedtask.operator.it;

import static io.delayedtask.operator.testing.Tasks.create;
import static io.delayedtask.operator.testing.Tasks.get;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.delayedtask.operator.api.v1alpha1.Condition;
import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.DelayedTaskQueue;
import io.delayedtask.operator.api.v1alpha1.DelayedTaskQueueSpec;
import io.delayedtask.operator.api.v1alpha1.Phase;
import io.delayedtask.operator.testing.JobOutcomes;
import io.delayedtask.operator.testing.OperatorFixture;
import io.delayedtask.operator.testing.RealKubernetes;
import io.delayedtask.operator.testing.RequiresRealKubernetes;
import io.delayedtask.operator.testing.Tasks;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Queues on the real API server (docs/reference.md, "Queues"): a paused queue holds a
 * due task (Scheduled, Ready, Queued=True/QueuePaused) and resuming fires it; a task naming a queue
 * that does not exist waits (QueueMissing) until the queue is created; a rate-limited queue spreads
 * a burst of tasks due at once; a concurrency of one holds a second Job until the first finishes;
 * the queue's status counts what waits and what was dispatched; the resync rebuilds a queue's
 * entries after a Redis flush.
 */
@RequiresRealKubernetes
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class QueueIT {
  private static final Duration TIMEOUT = Duration.ofSeconds(60);

  private OperatorFixture.OnRealKubernetes operator;
  private KubernetesClient client;
  private String namespace;

  @BeforeAll
  void start() {
    // A resync every second: the test of a Redis flush waits for one.
    operator = OperatorFixture.startOnRealKubernetes(RealKubernetes.shared(), "queues", OperatorFixture.SHORT_RESYNC);
    client = operator.kube().client();
    namespace = operator.namespace();
  }

  @AfterAll
  void stop() {
    operator.close();
  }

  @Test
  void aPausedQueueHoldsItsDueTaskAsQueuedAndResumingFiresIt() {
    queue("held", spec -> spec.setPaused(true));
    create(client, Tasks.task(namespace, "waits-for-resume", spec -> {
      spec.setRunAt(Tasks.rfc3339(Instant.now().plusSeconds(1)));
      spec.setQueue("held");
    }));

    await("Queued=True, QueuePaused").atMost(TIMEOUT).until(() -> condition("waits-for-resume", Condition.QUEUED)
        .filter(queued -> "True".equals(queued.getStatus()) && "QueuePaused".equals(queued.getReason())).isPresent());
    DelayedTask held = get(client, namespace, "waits-for-resume");
    assertThat(held.getStatus().getPhase()).isEqualTo(Phase.Scheduled);
    assertThat(condition("waits-for-resume", Condition.READY)).get().extracting(Condition::getStatus).isEqualTo("True");
    await("the queue's status counts it").atMost(TIMEOUT).until(() -> {
      DelayedTaskQueue queue = queue("held");
      return queue.getStatus() != null && Long.valueOf(1).equals(queue.getStatus().getWaiting())
          && queue.getStatus().getConditions().stream()
              .anyMatch(c -> "Paused".equals(c.getType()) && "True".equals(c.getStatus()));
    });
    assertThat(get(client, namespace, "waits-for-resume").getStatus().getPhase()).as("still held")
        .isEqualTo(Phase.Scheduled);

    client.resources(DelayedTaskQueue.class).inNamespace(namespace).withName("held")
        .edit(queue -> {
          queue.getSpec().setPaused(false);
          return queue;
        });

    await("fired on resume").atMost(TIMEOUT).until(() ->
        phase("waits-for-resume") == Phase.Fired);
    assertThat(condition("waits-for-resume", Condition.QUEUED)).as("no longer queued").isEmpty();
    await("the queue's status counts the dispatch").atMost(TIMEOUT).until(() -> {
      DelayedTaskQueue queue = queue("held");
      return queue.getStatus() != null && Long.valueOf(1).equals(queue.getStatus().getDispatchedTotal())
          && Long.valueOf(0).equals(queue.getStatus().getWaiting());
    });
  }

  @Test
  void aTaskNamingAMissingQueueWaitsUntilTheQueueIsCreated() {
    create(client, Tasks.task(namespace, "before-its-queue", spec -> {
      spec.setRunAt(Tasks.rfc3339(Instant.now()));
      spec.setQueue("created-later");
    }));

    await("Queued=True, QueueMissing").atMost(TIMEOUT).until(() -> condition("before-its-queue", Condition.QUEUED)
        .filter(queued -> "QueueMissing".equals(queued.getReason())).isPresent());

    queue("created-later", spec -> { });

    await("fired once its queue exists").atMost(TIMEOUT).until(() ->
        phase("before-its-queue") == Phase.Fired);
  }

  @Test
  void aRateLimitedQueueSpreadsABurstOfTasksDueAtOnce() {
    queue("slow", spec -> {
      spec.setMaxDispatchesPerSecond(2.0);
      spec.setMaxBurst(1);
    });
    Instant due = Instant.now().plusSeconds(2);
    List<String> names = IntStream.range(0, 5).mapToObj(i -> "burst-" + i).toList();
    for (String name : names) {
      create(client, Tasks.task(namespace, name, spec -> {
        spec.setRunAt(Tasks.rfc3339(due));
        spec.setQueue("slow");
      }));
    }

    await("all fired").atMost(TIMEOUT).until(() -> names.stream()
        .allMatch(name -> phase(name) == Phase.Fired));
    List<Instant> fired = names.stream()
        .map(name -> Instant.parse(get(client, namespace, name).getStatus().getFiredTime())).sorted().toList();
    // 1 at once, then one every 0.5 s: 5 tasks take at least 2 s (less a claim's jitter).
    assertThat(Duration.between(fired.get(0), fired.get(4))).isGreaterThanOrEqualTo(Duration.ofMillis(1_800));
    for (int i = 0; i + 1 < fired.size(); i++) {
      assertThat(Duration.between(fired.get(i), fired.get(i + 1))).as("between firings %d and %d", i, i + 1)
          .isGreaterThanOrEqualTo(Duration.ofMillis(300));
    }
  }

  @Test
  void aConcurrencyOfOneRunsTheNextJobOnlyWhenTheFirstFinishes() {
    queue("one-at-a-time", spec -> spec.setMaxConcurrentDispatches(1));
    Instant due = Instant.now().plusSeconds(1);
    for (String name : List.of("job-first", "job-second")) {
      create(client, Tasks.task(namespace, name, spec -> {
        spec.setRunAt(Tasks.rfc3339(name.equals("job-first") ? due : due.plusMillis(200)));
        spec.setJobTemplate(Tasks.jobTemplate());
        spec.setQueue("one-at-a-time");
      }));
    }

    await("the first Job runs").atMost(TIMEOUT).until(() -> phase("job-first") == Phase.Running);
    await("the second waits for a slot").atMost(TIMEOUT).until(() -> condition("job-second", Condition.QUEUED)
        .filter(queued -> "ConcurrencyLimited".equals(queued.getReason())).isPresent());
    assertThat(phase("job-second")).isEqualTo(Phase.Scheduled);

    Job first = client.batch().v1().jobs().inNamespace(namespace)
        .withName(get(client, namespace, "job-first").getStatus().getJobName()).get();
    JobOutcomes.complete(client, first);

    await("the second Job runs once the first finished").atMost(TIMEOUT).until(() -> phase("job-second") == Phase.Running);
    assertThat(phase("job-first")).isEqualTo(Phase.Succeeded);
  }

  @Test
  void theResyncRebuildsAQueuesEntriesAfterRedisIsFlushed() {
    queue("rebuilt", spec -> spec.setPaused(true));
    create(client, Tasks.task(namespace, "survives-flush", spec -> {
      spec.setRunAt(Tasks.rfc3339(Instant.now().plusSeconds(3_600)));
      spec.setQueue("rebuilt");
    }));
    String due = "queues:{q:" + namespace + "/rebuilt}:due";
    try (RedisClient redis = RedisClient.create(operator.redis().uri());
         StatefulRedisConnection<String, String> connection = redis.connect()) {
      await("written to the queue's group").atMost(TIMEOUT).until(() -> connection.sync().zcard(due) == 1);
      connection.sync().flushall();
      await("the resync writes it back").atMost(TIMEOUT).until(() -> connection.sync().zcard(due) == 1);
      assertThat(connection.sync().zrange(due, 0, -1)).singleElement().asString().startsWith(namespace
          + "/survives-flush/");
    }
  }

  private DelayedTaskQueue queue(String name, Consumer<DelayedTaskQueueSpec> spec) {
    DelayedTaskQueue queue = new DelayedTaskQueue();
    queue.setMetadata(new ObjectMetaBuilder().withName(name).withNamespace(namespace).build());
    DelayedTaskQueueSpec queueSpec = new DelayedTaskQueueSpec();
    spec.accept(queueSpec);
    queue.setSpec(queueSpec);
    return client.resources(DelayedTaskQueue.class).inNamespace(namespace).resource(queue).create();
  }

  private DelayedTaskQueue queue(String name) {
    return client.resources(DelayedTaskQueue.class).inNamespace(namespace).withName(name).get();
  }

  private Phase phase(String task) {
    return Tasks.phase(client, namespace, task).orElse(null);
  }

  private Optional<Condition> condition(String task, String type) {
    DelayedTask current = get(client, namespace, task);
    return current.getStatus() == null ? Optional.empty()
        : current.getStatus().getConditions().stream().filter(c -> type.equals(c.getType())).findFirst();
  }
}
