package io.delayedtask.operator.leader;

import static org.assertj.core.api.Assertions.assertThat;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.schedule.ClaimedEntry;
import io.delayedtask.operator.schedule.Disposition;
import io.delayedtask.operator.testing.FixedTaskCache;
import io.delayedtask.operator.testing.Tasks;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.javaoperatorsdk.operator.processing.event.Event;
import io.javaoperatorsdk.operator.processing.event.EventHandler;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * The hand-off from the poller to the reconciler, without a poller or JOSDK: each claim of a known
 * task becomes its secondary resource and an event for it; what the reconcile says of it completes
 * what the poller waits for; claims nobody will reconcile are settled here.
 */
class DueClaimsTest {
  private static final Instant NOW = Instant.parse("2026-12-03T07:00:00Z");

  private final DelayedTask task = task("t", "uid-1");
  private final FixedTaskCache cache = FixedTaskCache.of(task);
  // No API server: a cache miss would need one, and these tests never miss.
  private final DueClaims claims = new DueClaims(cache, null);
  private final List<Event> events = new CopyOnWriteArrayList<>();

  DueClaimsTest() {
    claims.setEventHandler(
        new EventHandler() {
          @Override
          public void handleEvent(Event event) {
            events.add(event);
          }
        });
  }

  @Test
  void aClaimOfAKnownTaskWakesItsReconcileAndWaitsForItsVerdict() {
    ClaimedEntry claim = claim(task);

    CompletableFuture<Disposition> settled = claims.handle(claim).toCompletableFuture();

    assertThat(events)
        .extracting(Event::getRelatedCustomResourceID)
        .containsExactly(new ResourceID("t", "ns"));
    assertThat(claims.getSecondaryResources(task)).containsExactly(claim);
    assertThat(settled).isNotDone();

    claims.settle(claim, Disposition.acknowledge());

    assertThat(settled).isCompletedWithValue(Disposition.acknowledge());
    assertThat(claims.getSecondaryResources(task)).as("settled: no longer the task's").isEmpty();
  }

  @Test
  void aClaimOfATaskReCreatedUnderTheSameNameIsStaleAndNoOnesSecondaryResource() {
    DelayedTask recreated = task("t", "uid-2");
    cache.put(recreated);

    CompletableFuture<Disposition> settled = claims.handle(claim(task)).toCompletableFuture();

    assertThat(settled).isCompletedWithValue(Disposition.acknowledge());
    assertThat(events).isEmpty();
    assertThat(claims.getSecondaryResources(recreated)).isEmpty();
  }

  @Test
  void anEntryThatIsNoTaskIdIsDropped() {
    ClaimedEntry junk = new ClaimedEntry("not-a-task", NOW, NOW, "op:0:1", System.nanoTime());

    assertThat(claims.handle(junk).toCompletableFuture())
        .isCompletedWithValue(Disposition.acknowledge());
    assertThat(events).isEmpty();
  }

  @Test
  void whenLeadershipEndsEveryUnsettledClaimGoesBackAtItsDueTime() {
    ClaimedEntry claim = claim(task);
    CompletableFuture<Disposition> settled = claims.handle(claim).toCompletableFuture();

    claims.handBackAll();

    assertThat(settled).isCompletedWithValue(Disposition.retryAt(claim.due()));
  }

  @Test
  void aTaskDeletedWithoutAReconcileDropsItsClaim() {
    CompletableFuture<Disposition> settled = claims.handle(claim(task)).toCompletableFuture();

    claims.onResourceDeleted(task);

    assertThat(settled).isCompletedWithValue(Disposition.acknowledge());
  }

  @Test
  void aNewerClaimOfTheSameTaskReplacesTheOlderOne() {
    ClaimedEntry older = claim(task);
    ClaimedEntry newer =
        new ClaimedEntry(older.id(), older.due(), NOW.plusSeconds(60), "op:0:2", System.nanoTime());
    CompletableFuture<Disposition> first = claims.handle(older).toCompletableFuture();

    CompletableFuture<Disposition> second = claims.handle(newer).toCompletableFuture();

    assertThat(first).as("its token is dead: acknowledging it changes nothing").isDone();
    assertThat(claims.getSecondaryResources(task)).containsExactly(newer);
    assertThat(second).isNotDone();
  }

  @Test
  void aTransientFailureLeavesTheRetryTimeToTheSchedulesOneBackoff() {
    ClaimedEntry claim = claim(task);
    CompletableFuture<Disposition> settled = claims.handle(claim).toCompletableFuture();

    claims.retryLater(claim, "the API server answered 503");

    assertThat(settled).isCompletedWithValue(Disposition.backoff("the API server answered 503"));
  }

  private static DelayedTask task(String name, String uid) {
    DelayedTask task = Tasks.statusOnly("ns", name, NOW);
    task.setMetadata(new ObjectMetaBuilder(task.getMetadata()).withUid(uid).build());
    return task;
  }

  private static ClaimedEntry claim(DelayedTask task) {
    return new ClaimedEntry(
        ScheduleIds.idOf(task), NOW, NOW.plusMillis(2), "op:0:1", System.nanoTime());
  }
}
