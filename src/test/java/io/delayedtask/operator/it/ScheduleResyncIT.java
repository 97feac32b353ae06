package io.delayedtask.operator.it;

import static io.delayedtask.operator.testing.Tasks.create;
import static io.delayedtask.operator.testing.Tasks.task;
import static org.assertj.core.api.Assertions.assertThat;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.DelayedTaskStatus;
import io.delayedtask.operator.api.v1alpha1.Phase;
import io.delayedtask.operator.config.OperatorConfig;
import io.delayedtask.operator.leader.ScheduleIds;
import io.delayedtask.operator.leader.ScheduleResync;
import io.delayedtask.operator.schedule.RedisSchedule;
import io.delayedtask.operator.sink.SinkSpecRules;
import io.delayedtask.operator.task.spec.SpecValidator;
import io.delayedtask.operator.testing.FixedTaskCache;
import io.delayedtask.operator.testing.RealKubernetes;
import io.delayedtask.operator.testing.RedisProcess;
import io.delayedtask.operator.testing.RequiresRealKubernetes;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The resync on its own, against a real Redis and tasks from a real API server (as the informer
 * cache holds them): each kind of repair, and a GET only for an entry whose task the cache lacks.
 */
@RequiresRealKubernetes
class ScheduleResyncIT {
  private static final Instant LATER = Instant.parse("2099-01-01T00:00:00Z");

  @Test
  void rebuildsTheScheduleFromTheTasks() {
    RealKubernetes kube = RealKubernetes.shared();
    String ns = kube.createNamespace("resync");
    try (RedisProcess redis = RedisProcess.start();
        RedisSchedule schedule =
            RedisSchedule.open(
                OperatorConfig.fromEnv(
                    Map.of(
                        OperatorConfig.REDIS_URI,
                        redis.uri(),
                        OperatorConfig.KEY_PREFIX,
                        "resync")))) {
      KubernetesClient client = kube.client();
      DelayedTask missing = create(client, task(ns, "missing", s -> s.setRunAt(LATER.toString())));
      DelayedTask early = create(client, task(ns, "early", s -> s.setRunAt(LATER.toString())));
      DelayedTask suspended =
          create(
              client,
              task(
                  ns,
                  "suspended",
                  s -> {
                    s.setRunAt(LATER.toString());
                    s.setSuspend(true);
                  }));
      DelayedTask fired =
          create(client, task(ns, "fired", s -> s.setRunAt("2026-01-01T00:00:00Z")));
      DelayedTaskStatus firedStatus = new DelayedTaskStatus();
      firedStatus.setPhase(Phase.Fired);
      firedStatus.setDueTime("2026-01-01T00:00:00.000Z");
      fired.setStatus(firedStatus);
      client.resource(fired).updateStatus();

      schedule.schedule(ScheduleIds.idOf(early), LATER.minusSeconds(3600));
      schedule.schedule(ScheduleIds.idOf(suspended), LATER);
      schedule.schedule(ScheduleIds.idOf(fired), Instant.parse("2026-01-01T00:00:00Z"));
      schedule.schedule(ns + "/deleted-long-ago/uid-0", LATER);

      SimpleMeterRegistry registry = new SimpleMeterRegistry();
      ScheduleResync resync =
          new ScheduleResync(
              informerCopy(client, ns),
              client,
              schedule,
              new SpecValidator(SinkSpecRules.defaults()),
              registry);
      ScheduleResync.Repairs repairs = resync.run();

      assertThat(repairs).isEqualTo(new ScheduleResync.Repairs(1, 3, 1));
      assertThat(schedule.waitingEntries())
          .containsOnly(
              Map.entry(ScheduleIds.idOf(missing), LATER),
              Map.entry(ScheduleIds.idOf(early), LATER));
      assertThat(registry.get(ScheduleResync.REPAIRS).tag("kind", "removed").counter().count())
          .isEqualTo(3.0);

      // Nothing left to repair.
      assertThat(resync.run()).isEqualTo(new ScheduleResync.Repairs(0, 0, 0));
    }
  }

  /**
   * Only entries of tasks the reconciler had handled count as drift
   * (delayedtask_resync_drift_repairs_total).
   */
  @Test
  void repairsOfAlreadyReconciledTasksAreCountedApart() {
    RealKubernetes kube = RealKubernetes.shared();
    String ns = kube.createNamespace("drift");
    try (RedisProcess redis = RedisProcess.start();
        RedisSchedule schedule =
            RedisSchedule.open(
                OperatorConfig.fromEnv(
                    Map.of(
                        OperatorConfig.REDIS_URI,
                        redis.uri(),
                        OperatorConfig.KEY_PREFIX,
                        "drift")))) {
      KubernetesClient client = kube.client();
      create(client, task(ns, "just-created", s -> s.setRunAt(LATER.toString())));
      DelayedTask reconciled =
          create(client, task(ns, "reconciled", s -> s.setRunAt(LATER.toString())));
      DelayedTaskStatus status = new DelayedTaskStatus();
      status.setPhase(Phase.Scheduled);
      status.setDueTime("2099-01-01T00:00:00.000Z");
      status.setObservedGeneration(reconciled.getMetadata().getGeneration());
      reconciled.setStatus(status);
      client.resource(reconciled).updateStatus();

      ScheduleResync resync =
          new ScheduleResync(
              informerCopy(client, ns),
              client,
              schedule,
              new SpecValidator(SinkSpecRules.defaults()),
              new SimpleMeterRegistry());
      assertThat(resync.run()).isEqualTo(new ScheduleResync.Repairs(2, 0, 0, 1));
    }
  }

  /**
   * What an informer on the namespace holds once synced: the tasks as the API server lists them.
   */
  private static FixedTaskCache informerCopy(KubernetesClient client, String ns) {
    return FixedTaskCache.of(
        client
            .resources(DelayedTask.class)
            .inNamespace(ns)
            .list()
            .getItems()
            .toArray(DelayedTask[]::new));
  }
}
