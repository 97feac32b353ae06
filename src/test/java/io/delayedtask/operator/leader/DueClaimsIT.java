package io.delayedtask.operator.leader;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.schedule.ClaimedEntry;
import io.delayedtask.operator.schedule.Disposition;
import io.delayedtask.operator.schedule.RedisConnections;
import io.delayedtask.operator.schedule.RedisSchedule;
import io.delayedtask.operator.schedule.SchedulePoller;
import io.delayedtask.operator.schedule.ScheduleProbe;
import io.delayedtask.operator.sink.SinkSpecRules;
import io.delayedtask.operator.task.spec.SpecValidator;
import io.delayedtask.operator.testing.ApiFault;
import io.delayedtask.operator.testing.FixedTaskCache;
import io.delayedtask.operator.testing.MockApiServer;
import io.delayedtask.operator.testing.RedisProcess;
import io.delayedtask.operator.testing.Tasks;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.javaoperatorsdk.operator.processing.event.Event;
import io.javaoperatorsdk.operator.processing.event.EventHandler;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The claims' hand-off against a real Redis and the mock API server (for faults on cue): the one
 * backoff runs on Redis's clock, lookups of unknown tasks never hold up the poller, and an entry of
 * a task in a namespace the operator may not read is dropped once.
 */
class DueClaimsIT {
  private RedisProcess redis;
  private RedisSchedule schedule;
  private MockApiServer api;
  private final FixedTaskCache cache = FixedTaskCache.of();
  private DueClaims claims;
  private SchedulePoller poller;

  @BeforeEach
  void start() {
    redis = RedisProcess.start();
    schedule = new RedisSchedule(RedisConnections.standalone(redis.uri()), "claims", 1);
    api = MockApiServer.start();
    claims = new DueClaims(cache, api.client());
  }

  @AfterEach
  void stop() {
    if (poller != null) {
      poller.stop();
    }
    claims.stop();
    schedule.close();
    api.close();
    redis.close();
  }

  /**
   * The reconciler as the claims see it: told of each claim of a task, on the thread that hands it
   * over.
   */
  private void reconcileWith(Consumer<ClaimedEntry> reconcile) {
    claims.setEventHandler(
        new EventHandler() {
          @Override
          public void handleEvent(Event event) {
            ResourceID id = event.getRelatedCustomResourceID();
            cache
                .get(id.getNamespace().orElseThrow(), id.getName())
                .flatMap(task -> claims.getSecondaryResources(task).stream().findFirst())
                .ifPresent(claim -> CompletableFuture.runAsync(() -> reconcile.accept(claim)));
          }
        });
    poller =
        new SchedulePoller(
            schedule,
            claims,
            SchedulePoller.Settings.defaults().withMaxIdleSleep(Duration.ofMillis(200)));
    poller.start();
  }

  @Test
  void aFailingClaimWaitsItsBackoffByRedisClockWhateverThisHostsClockSays() {
    DelayedTask task = task("ns", "failing");
    List<Instant> claimedAt = new CopyOnWriteArrayList<>();
    reconcileWith(
        claim -> {
          claimedAt.add(claim.claimedAt());
          claims.retryLater(claim, "creating the Job failed: 503");
        });

    schedule.schedule(ScheduleIds.idOf(task), ScheduleProbe.serverTime(schedule).minusSeconds(1));

    await().atMost(Duration.ofSeconds(10)).until(() -> claimedAt.size() >= 3);
    // 0.5 s, then 1 s after each claim, by the claims' own (Redis) times: no hot loop.
    assertThat(Duration.between(claimedAt.get(0), claimedAt.get(1)))
        .isGreaterThanOrEqualTo(Duration.ofMillis(500));
    assertThat(Duration.between(claimedAt.get(1), claimedAt.get(2)))
        .isGreaterThanOrEqualTo(Duration.ofSeconds(1));
  }

  @Test
  void slowLookupsOfStaleEntriesDoNotDelayAClaimOfAKnownTask() {
    api.inject(
        ApiFault.of("GET", ".*/namespaces/ns/delayedtasks/stale-.*", 404, 1000)
            .delayed(Duration.ofMillis(1500)));
    List<String> reconciled = new CopyOnWriteArrayList<>();
    reconcileWith(
        claim -> {
          reconciled.add(claim.id());
          claims.settle(claim, Disposition.acknowledge());
        });
    Instant past = ScheduleProbe.serverTime(schedule).minusSeconds(60);
    for (int i = 0; i < 20; i++) {
      schedule.schedule("ns/stale-" + i + "/uid-" + i, past);
    }
    await().atMost(Duration.ofSeconds(30)).until(() -> poller.stats().claimed() >= 20);

    DelayedTask onTime = task("ns", "on-time");
    schedule.schedule(ScheduleIds.idOf(onTime), ScheduleProbe.serverTime(schedule));

    // 20 lookups of 1.5 s each are still going on: the known task is handed over meanwhile, well
    // before 20 lookups one after the other would end (30 s; the bound leaves a machine ten times
    // slower than an idle one room, and the lookups take as long on any machine).
    await()
        .atMost(Duration.ofSeconds(15))
        .until(() -> reconciled.contains(ScheduleIds.idOf(onTime)));
    assertThat(poller.stats().acknowledged())
        .as("stale entries still being looked up")
        .isLessThan(20);
  }

  @Test
  void anEntryOfATaskInANamespaceTheOperatorMayNotReadIsDroppedOnce() {
    api.inject(ApiFault.of("GET", ".*/namespaces/elsewhere/delayedtasks/.*", 403, 1000));
    ScheduleResync resync =
        new ScheduleResync(
            cache,
            api.client(),
            schedule,
            new SpecValidator(SinkSpecRules.defaults()),
            new SimpleMeterRegistry());
    Instant later = ScheduleProbe.serverTime(schedule).plusSeconds(3600);
    schedule.schedule("elsewhere/waiting/uid-1", later);

    assertThat(resync.run().removed()).isEqualTo(1);
    assertThat(schedule.waitingEntries()).isEmpty();
    int lookups = api.calls(call -> call.path().contains("/namespaces/elsewhere/")).size();
    assertThat(resync.run().total()).isZero();
    assertThat(api.calls(call -> call.path().contains("/namespaces/elsewhere/"))).hasSize(lookups);

    // A claimed one: the claim is dropped (acknowledged), not backed off for ever.
    List<String> reconciled = new CopyOnWriteArrayList<>();
    reconcileWith(claim -> reconciled.add(claim.id()));
    schedule.schedule("elsewhere/due/uid-2", ScheduleProbe.serverTime(schedule).minusSeconds(1));
    await().atMost(Duration.ofSeconds(5)).until(() -> poller.stats().acknowledged() == 1);
    assertThat(schedule.waitingEntries()).isEmpty();
    assertThat(schedule.inFlightIds()).isEmpty();
    assertThat(reconciled).isEmpty();
  }

  private DelayedTask task(String namespace, String name) {
    DelayedTask task = Tasks.statusOnly(namespace, name, Instant.now());
    task.setMetadata(new ObjectMetaBuilder(task.getMetadata()).withUid("uid-" + name).build());
    cache.put(task);
    return task;
  }
}
