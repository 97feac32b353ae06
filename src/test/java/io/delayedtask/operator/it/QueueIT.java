package io.delayedtask.operator.it;

import static io.delayedtask.operator.testing.Tasks.create;
import static io.delayedtask.operator.testing.Tasks.get;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.delayedtask.operator.api.v1alpha1.Condition;
import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.DelayedTaskQueue;
import io.delayedtask.operator.api.v1alpha1.DelayedTaskQueueSpec;
import io.delayedtask.operator.api.v1alpha1.DeliverySpec;
import io.delayedtask.operator.api.v1alpha1.Destination;
import io.delayedtask.operator.api.v1alpha1.Phase;
import io.delayedtask.operator.config.SinkConfig;
import io.delayedtask.operator.task.job.JobNames;
import io.delayedtask.operator.task.status.FireNow;
import io.delayedtask.operator.task.time.Times;
import io.delayedtask.operator.testing.Events;
import io.delayedtask.operator.testing.HangingReceiver;
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
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Queues on the real API server (docs/reference.md, "Queues"): a paused queue holds a due task
 * (Scheduled, Ready, Queued=True/QueuePaused) and resuming fires it; a task naming a queue that
 * does not exist waits (QueueMissing) until the queue is created; a rate-limited queue spreads a
 * burst of tasks due at once; a concurrency of one holds a second Job until the first finishes,
 * fails or is deleted; deliveries to a sink that hangs hold their slots until answered (a retry to
 * come or not) or timed out; fire-now bypasses a paused queue, once per value; a deadline passing
 * while the queue is paused makes the task Missed when the queue lets it go; the queue's status
 * counts what waits and what was dispatched; the resync rebuilds a queue's entries after a Redis
 * flush.
 */
@RequiresRealKubernetes
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class QueueIT {
  private static final Duration TIMEOUT = Duration.ofSeconds(60);

  private OperatorFixture.OnRealKubernetes operator;
  private KubernetesClient client;
  private String namespace;

  /** A sink that answers only when a test says so. */
  private HangingReceiver hanging;

  @BeforeAll
  void start() {
    hanging = HangingReceiver.start();
    // A resync every second: the test of a Redis flush waits for one.
    Map<String, String> env = new HashMap<>(OperatorFixture.SHORT_RESYNC);
    env.put(SinkConfig.ALLOWED_URIS, hanging.base());
    operator = OperatorFixture.startOnRealKubernetes(RealKubernetes.shared(), "queues", env);
    client = operator.kube().client();
    namespace = operator.namespace();
  }

  @AfterAll
  void stop() {
    operator.close();
    hanging.close();
  }

  @Test
  void aPausedQueueHoldsItsDueTaskAsQueuedAndResumingFiresIt() {
    queue("held", spec -> spec.setPaused(true));
    create(
        client,
        Tasks.task(
            namespace,
            "waits-for-resume",
            spec -> {
              spec.setRunAt(Tasks.rfc3339(Instant.now().plusSeconds(1)));
              spec.setQueue("held");
            }));

    await("Queued=True, QueuePaused")
        .atMost(TIMEOUT)
        .until(
            () ->
                condition("waits-for-resume", Condition.QUEUED)
                    .filter(
                        queued ->
                            "True".equals(queued.getStatus())
                                && "QueuePaused".equals(queued.getReason()))
                    .isPresent());
    DelayedTask held = get(client, namespace, "waits-for-resume");
    assertThat(held.getStatus().getPhase()).isEqualTo(Phase.Scheduled);
    assertThat(condition("waits-for-resume", Condition.READY))
        .get()
        .extracting(Condition::getStatus)
        .isEqualTo("True");
    await("the queue's status counts it")
        .atMost(TIMEOUT)
        .until(
            () -> {
              DelayedTaskQueue queue = queue("held");
              return queue.getStatus() != null
                  && Long.valueOf(1).equals(queue.getStatus().getWaiting())
                  && queue.getStatus().getConditions().stream()
                      .anyMatch(c -> "Paused".equals(c.getType()) && "True".equals(c.getStatus()));
            });
    assertThat(get(client, namespace, "waits-for-resume").getStatus().getPhase())
        .as("still held")
        .isEqualTo(Phase.Scheduled);

    client
        .resources(DelayedTaskQueue.class)
        .inNamespace(namespace)
        .withName("held")
        .edit(
            queue -> {
              queue.getSpec().setPaused(false);
              return queue;
            });

    await("fired on resume").atMost(TIMEOUT).until(() -> phase("waits-for-resume") == Phase.Fired);
    assertThat(condition("waits-for-resume", Condition.QUEUED)).as("no longer queued").isEmpty();
    await("the queue's status counts the dispatch")
        .atMost(TIMEOUT)
        .until(
            () -> {
              DelayedTaskQueue queue = queue("held");
              return queue.getStatus() != null
                  && Long.valueOf(1).equals(queue.getStatus().getDispatchedTotal())
                  && Long.valueOf(0).equals(queue.getStatus().getWaiting());
            });
  }

  @Test
  void aTaskNamingAMissingQueueWaitsUntilTheQueueIsCreated() {
    create(
        client,
        Tasks.task(
            namespace,
            "before-its-queue",
            spec -> {
              spec.setRunAt(Tasks.rfc3339(Instant.now()));
              spec.setQueue("created-later");
            }));

    await("Queued=True, QueueMissing")
        .atMost(TIMEOUT)
        .until(
            () ->
                condition("before-its-queue", Condition.QUEUED)
                    .filter(queued -> "QueueMissing".equals(queued.getReason()))
                    .isPresent());

    queue("created-later", spec -> {});

    await("fired once its queue exists")
        .atMost(TIMEOUT)
        .until(() -> phase("before-its-queue") == Phase.Fired);
  }

  @Test
  void aRateLimitedQueueSpreadsABurstOfTasksDueAtOnce() {
    queue(
        "slow",
        spec -> {
          spec.setMaxDispatchesPerSecond(2.0);
          spec.setMaxBurst(1);
        });
    Instant due = Instant.now().plusSeconds(2);
    List<String> names = IntStream.range(0, 5).mapToObj(i -> "burst-" + i).toList();
    for (String name : names) {
      create(
          client,
          Tasks.task(
              namespace,
              name,
              spec -> {
                spec.setRunAt(Tasks.rfc3339(due));
                spec.setQueue("slow");
              }));
    }

    await("all fired")
        .atMost(TIMEOUT)
        .until(() -> names.stream().allMatch(name -> phase(name) == Phase.Fired));
    List<Instant> fired =
        names.stream()
            .map(name -> Instant.parse(get(client, namespace, name).getStatus().getFiredTime()))
            .sorted()
            .toList();
    // 1 at once, then one every 0.5 s: 5 tasks take at least 2 s (less a claim's jitter).
    assertThat(Duration.between(fired.get(0), fired.get(4)))
        .isGreaterThanOrEqualTo(Duration.ofMillis(1_800));
    for (int i = 0; i + 1 < fired.size(); i++) {
      assertThat(Duration.between(fired.get(i), fired.get(i + 1)))
          .as("between firings %d and %d", i, i + 1)
          .isGreaterThanOrEqualTo(Duration.ofMillis(300));
    }
  }

  @Test
  void aConcurrencyOfOneRunsTheNextJobOnlyWhenTheFirstFinishes() {
    queue("one-at-a-time", spec -> spec.setMaxConcurrentDispatches(1));
    Instant due = Instant.now().plusSeconds(1);
    for (String name : List.of("job-first", "job-second")) {
      create(
          client,
          Tasks.task(
              namespace,
              name,
              spec -> {
                spec.setRunAt(Tasks.rfc3339(name.equals("job-first") ? due : due.plusMillis(200)));
                spec.setJobTemplate(Tasks.jobTemplate());
                spec.setQueue("one-at-a-time");
              }));
    }

    await("the first Job runs").atMost(TIMEOUT).until(() -> phase("job-first") == Phase.Running);
    await("the second waits for a slot")
        .atMost(TIMEOUT)
        .until(
            () ->
                condition("job-second", Condition.QUEUED)
                    .filter(queued -> "ConcurrencyLimited".equals(queued.getReason()))
                    .isPresent());
    assertThat(phase("job-second")).isEqualTo(Phase.Scheduled);

    Job first =
        client
            .batch()
            .v1()
            .jobs()
            .inNamespace(namespace)
            .withName(get(client, namespace, "job-first").getStatus().getJobName())
            .get();
    JobOutcomes.complete(client, first);

    await("the second Job runs once the first finished")
        .atMost(TIMEOUT)
        .until(() -> phase("job-second") == Phase.Running);
    assertThat(phase("job-first")).isEqualTo(Phase.Succeeded);
  }

  @Test
  void aJobThatFailsOrIsDeletedFreesItsSlotAtOnce() {
    queue("jobs-end", spec -> spec.setMaxConcurrentDispatches(1));
    Instant due = Instant.now().plusSeconds(1);
    List<String> names = List.of("job-fails", "job-deleted", "job-last");
    for (int i = 0; i < names.size(); i++) {
      Instant runAt = due.plusMillis(200L * i);
      create(
          client,
          Tasks.task(
              namespace,
              names.get(i),
              spec -> {
                spec.setRunAt(Tasks.rfc3339(runAt));
                spec.setJobTemplate(Tasks.jobTemplate());
                spec.setQueue("jobs-end");
              }));
    }

    await("the first Job runs").atMost(TIMEOUT).until(() -> phase("job-fails") == Phase.Running);
    await("the second waits for the slot")
        .atMost(TIMEOUT)
        .until(() -> concurrencyLimited("job-deleted"));
    JobOutcomes.fail(client, job("job-fails"), "exit status 1");

    // The resync frees a slot whose end it missed only after 6 minutes: within this wait, only the
    // Job's Failed condition can have freed it.
    await("a failed Job frees its slot")
        .atMost(TIMEOUT)
        .until(() -> phase("job-deleted") == Phase.Running);
    assertThat(phase("job-fails")).isEqualTo(Phase.Failed);
    await("the third waits for the slot")
        .atMost(TIMEOUT)
        .until(() -> concurrencyLimited("job-last"));
    assertThat(phase("job-last")).isEqualTo(Phase.Scheduled);

    client
        .batch()
        .v1()
        .jobs()
        .inNamespace(namespace)
        .withName(job("job-deleted").getMetadata().getName())
        .delete();

    await("a deleted Job frees its slot")
        .atMost(TIMEOUT)
        .until(() -> phase("job-last") == Phase.Running);
    assertThat(phase("job-deleted")).isEqualTo(Phase.Failed);
  }

  @Test
  void deliveriesToASinkThatHangsHoldTheirSlotsUntilAnsweredOrTimedOut() {
    queue("hanging-sinks", spec -> spec.setMaxConcurrentDispatches(2));
    Instant due = Instant.now().plusSeconds(1);
    for (int i = 0; i < 5; i++) {
      int n = i;
      create(
          client,
          Tasks.task(
              namespace,
              "hangs-" + n,
              spec -> {
                spec.setRunAt(Tasks.rfc3339(due.plusMillis(200L * n)));
                Destination sink = new Destination();
                sink.setUri(hanging.base() + "/hangs-" + n);
                spec.setSink(sink);
                DeliverySpec delivery = new DeliverySpec();
                // hangs-0 is answered 503 and retried 10 minutes later, long after this test: its
                // slot is
                // freed at the answer (the reconcile recording it, and the retry's rescheduling of
                // the
                // entry, whose cancel frees a slot too). hangs-2 is never answered: its 2 s timeout
                // ends
                // its attempt, and only the reconcile recording the timeout frees its slot. The
                // others
                // wait for an answer.
                delivery.setRetry(n == 0 ? 1 : 0);
                delivery.setBackoffDelay("10m");
                delivery.setTimeout(n == 2 ? "2s" : "50s");
                spec.setDelivery(delivery);
                spec.setQueue("hanging-sinks");
              }));
    }

    await("two requests open").atMost(TIMEOUT).until(() -> hanging.paths().size() == 2);
    // One claim may take both (due 200 ms apart) and send them at once: either may arrive first.
    assertThat(hanging.paths()).containsExactlyInAnyOrder("/hangs-0", "/hangs-1");
    await("the third waits for a slot").atMost(TIMEOUT).until(() -> concurrencyLimited("hangs-2"));
    await("no third request while two hang")
        .during(Duration.ofSeconds(2))
        .atMost(Duration.ofSeconds(10))
        .until(() -> hanging.paths().size() == 2);

    // Its retry is 10 minutes away, and the resync frees a slot whose end it missed only after 6.
    hanging.answer("/hangs-0", 503);
    await("an answer frees its slot, a retry to come or not")
        .atMost(TIMEOUT)
        .until(() -> hanging.paths().size() == 3);
    assertThat(hanging.paths().get(2)).isEqualTo("/hangs-2");
    await("hangs-0 waits for its retry")
        .atMost(TIMEOUT)
        .until(
            () -> {
              DelayedTask retried = get(client, namespace, "hangs-0");
              return retried.getStatus().getDelivery() != null
                  && Integer.valueOf(503)
                      .equals(retried.getStatus().getDelivery().getResponseCode());
            });
    DelayedTask retried = get(client, namespace, "hangs-0");
    assertThat(retried.getStatus().getPhase()).isEqualTo(Phase.Running);
    assertThat(retried.getStatus().getDelivery().getNextAttemptTime())
        .as("its retry's time")
        .isNotNull();

    // hangs-1 and hangs-2 hang now; only hangs-2's timeout can free a slot.
    await("a timeout frees its slot").atMost(TIMEOUT).until(() -> hanging.paths().size() == 4);
    List<HangingReceiver.Arrival> arrivals = hanging.arrivals();
    assertThat(arrivals.get(3).path()).isEqualTo("/hangs-3");
    assertThat(Duration.between(arrivals.get(2).at(), arrivals.get(3).at()))
        .as("the fourth request waited for the third's 2 s timeout (less its send's lag)")
        .isGreaterThanOrEqualTo(Duration.ofMillis(1_500));
    await().atMost(TIMEOUT).until(() -> phase("hangs-2") == Phase.Failed);
    assertThat(phase("hangs-1")).as("still waiting for its answer").isEqualTo(Phase.Scheduled);
    await("no fifth request while two hang")
        .during(Duration.ofSeconds(2))
        .atMost(Duration.ofSeconds(10))
        .until(() -> hanging.paths().size() == 4);

    hanging.answer("/hangs-1");
    hanging.answer("/hangs-3");
    hanging.answer("/hangs-4");
    await("the last goes once a slot is free")
        .atMost(TIMEOUT)
        .until(
            () ->
                hanging.paths().size() == 5
                    && Tasks.phase(client, namespace, "hangs-4").orElse(null) == Phase.Succeeded);
    assertThat(phase("hangs-1")).isEqualTo(Phase.Succeeded);
    assertThat(phase("hangs-3")).isEqualTo(Phase.Succeeded);
  }

  @Test
  void fireNowFiresATaskItsPausedQueueHoldsOncePerValue() {
    queue("paused-fire-now", spec -> spec.setPaused(true));
    for (String name : List.of("fired-now", "still-held")) {
      create(
          client,
          Tasks.task(
              namespace,
              name,
              spec -> {
                spec.setRunAt(Tasks.rfc3339(Instant.now()));
                spec.setJobTemplate(Tasks.jobTemplate());
                spec.setQueue("paused-fire-now");
              }));
    }
    await("both held")
        .atMost(TIMEOUT)
        .until(() -> queuePaused("fired-now") && queuePaused("still-held"));

    String at = Times.format(Instant.now());
    annotateFireNow("fired-now", at);

    await("fired though its queue is paused")
        .atMost(TIMEOUT)
        .until(() -> phase("fired-now") == Phase.Running);
    DelayedTask fired = get(client, namespace, "fired-now");
    assertThat(fired.getStatus().getFireNowHandled()).isEqualTo(at);
    assertThat(fired.getStatus().getJobName())
        .isEqualTo(JobNames.jobName("fired-now", fired.getMetadata().getUid(), Instant.parse(at)));
    assertThat(condition("fired-now", Condition.QUEUED)).as("no longer queued").isEmpty();
    assertThat(queuePaused("still-held")).as("the queue holds the others").isTrue();
    assertThat(phase("still-held")).isEqualTo(Phase.Scheduled);

    // The same value again (a manifest re-applied without it, then with it): nothing more.
    annotateFireNow("fired-now", null);
    annotateFireNow("fired-now", at);
    await("nothing fires a second time")
        .during(Duration.ofSeconds(3))
        .atMost(Duration.ofSeconds(15))
        .until(() -> jobsOf("fired-now") == 1 && phase("fired-now") == Phase.Running);
    assertThat(Events.count(client, namespace, "fired-now", "FireNow"))
        .as("acted on once")
        .isEqualTo(1);
    assertThat(Events.reasons(client, namespace, "fired-now"))
        .as("not a warning either")
        .doesNotContain("FireNowIgnored");
    assertThat(jobsOf("still-held")).isZero();
  }

  @Test
  void aDeadlinePassingWhileItsQueueIsPausedMakesTheTaskMissedWhenTheQueueLetsItGo() {
    queue("paused-deadline", spec -> spec.setPaused(true));
    Instant due = Instant.now();
    create(
        client,
        Tasks.task(
            namespace,
            "too-late",
            spec -> {
              spec.setRunAt(Tasks.rfc3339(due));
              spec.setStartingDeadlineSeconds(1L);
              spec.setQueue("paused-deadline");
            }));
    create(
        client,
        Tasks.task(
            namespace,
            "no-deadline",
            spec -> {
              spec.setRunAt(Tasks.rfc3339(due));
              spec.setQueue("paused-deadline");
            }));
    await("both held")
        .atMost(TIMEOUT)
        .until(() -> queuePaused("too-late") && queuePaused("no-deadline"));
    await("its deadline passed while held")
        .atMost(TIMEOUT)
        .until(() -> Instant.now().isAfter(due.plusSeconds(2)));
    assertThat(phase("too-late"))
        .as("held: it is Missed when its queue lets it go")
        .isEqualTo(Phase.Scheduled);

    client
        .resources(DelayedTaskQueue.class)
        .inNamespace(namespace)
        .withName("paused-deadline")
        .edit(
            queue -> {
              queue.getSpec().setPaused(false);
              return queue;
            });

    await("resumed")
        .atMost(TIMEOUT)
        .until(() -> phase("too-late") == Phase.Missed && phase("no-deadline") == Phase.Fired);
    assertThat(get(client, namespace, "too-late").getStatus().getFiredTime())
        .as("nothing fired")
        .isNull();
  }

  @Test
  void theResyncRebuildsAQueuesEntriesAfterRedisIsFlushed() {
    queue("rebuilt", spec -> spec.setPaused(true));
    create(
        client,
        Tasks.task(
            namespace,
            "survives-flush",
            spec -> {
              spec.setRunAt(Tasks.rfc3339(Instant.now().plusSeconds(3_600)));
              spec.setQueue("rebuilt");
            }));
    String due = "queues:{q:" + namespace + "/rebuilt}:due";
    try (RedisClient redis = RedisClient.create(operator.redis().uri());
        StatefulRedisConnection<String, String> connection = redis.connect()) {
      await("written to the queue's group")
          .atMost(TIMEOUT)
          .until(() -> connection.sync().zcard(due) == 1);
      connection.sync().flushall();
      await("the resync writes it back")
          .atMost(TIMEOUT)
          .until(() -> connection.sync().zcard(due) == 1);
      assertThat(connection.sync().zrange(due, 0, -1))
          .singleElement()
          .asString()
          .startsWith(namespace + "/survives-flush/");
    }
  }

  private boolean concurrencyLimited(String task) {
    return condition(task, Condition.QUEUED)
        .filter(
            queued ->
                "True".equals(queued.getStatus())
                    && "ConcurrencyLimited".equals(queued.getReason()))
        .isPresent();
  }

  private boolean queuePaused(String task) {
    return condition(task, Condition.QUEUED)
        .filter(
            queued -> "True".equals(queued.getStatus()) && "QueuePaused".equals(queued.getReason()))
        .isPresent();
  }

  private Job job(String task) {
    return client
        .batch()
        .v1()
        .jobs()
        .inNamespace(namespace)
        .withName(get(client, namespace, task).getStatus().getJobName())
        .get();
  }

  private int jobsOf(String task) {
    return client
        .batch()
        .v1()
        .jobs()
        .inNamespace(namespace)
        .withLabel("delayedtask.io/task", task)
        .list()
        .getItems()
        .size();
  }

  /** Sets the fire-now annotation to {@code value}, or removes it (null). */
  private void annotateFireNow(String task, String value) {
    client
        .resources(DelayedTask.class)
        .inNamespace(namespace)
        .withName(task)
        .edit(
            current -> {
              Map<String, String> annotations =
                  current.getMetadata().getAnnotations() == null
                      ? new HashMap<>()
                      : new HashMap<>(current.getMetadata().getAnnotations());
              if (value == null) {
                annotations.remove(FireNow.ANNOTATION);
              } else {
                annotations.put(FireNow.ANNOTATION, value);
              }
              current.getMetadata().setAnnotations(annotations);
              return current;
            });
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
    return current.getStatus() == null
        ? Optional.empty()
        : current.getStatus().getConditions().stream()
            .filter(c -> type.equals(c.getType()))
            .findFirst();
  }
}
