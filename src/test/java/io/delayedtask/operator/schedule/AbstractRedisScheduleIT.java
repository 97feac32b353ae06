package io.delayedtask.operator.schedule;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The schedule's behaviour against a real Redis; subclasses supply standalone or cluster. Each test
 * uses its own key prefix, so tests do not see each other's entries.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class AbstractRedisScheduleIT {
  private static final Duration LONG_LEASE = Duration.ofMinutes(5);

  protected String prefix;
  protected RedisSchedule schedule;
  private final List<AutoCloseable> closeables = new ArrayList<>();

  /** Fresh connections to the Redis under test. */
  protected abstract RedisConnections connect();

  protected abstract int shards();

  /** SCRIPT FLUSH on every node that holds schedule keys. */
  protected abstract void flushScripts();

  @BeforeEach
  void openSchedule() {
    prefix = "it-" + UUID.randomUUID().toString().substring(0, 8);
    schedule = newSchedule();
  }

  @AfterEach
  void closeEverything() throws Exception {
    Collections.reverse(closeables);
    for (AutoCloseable closeable : closeables) {
      closeable.close();
    }
    closeables.clear();
  }

  /** Another schedule on the same keys with its own connections, as another process would have. */
  protected RedisSchedule newSchedule() {
    RedisSchedule opened = new RedisSchedule(connect(), prefix, shards());
    closeables.add(opened);
    return opened;
  }

  /** The Redis clock in whole ms, as scores keep it (due times in the API are ms-precise). */
  protected Instant redisNow() {
    return ScheduleProbe.serverTime(schedule).truncatedTo(java.time.temporal.ChronoUnit.MILLIS);
  }

  private SchedulePoller newPoller(DueEntryHandler handler, SchedulePoller.Settings settings) {
    SchedulePoller poller =
        new SchedulePoller(schedule, DueEntryHandler.blocking(handler), settings);
    closeables.add(poller);
    return poller;
  }

  @Test
  void claimAcknowledgeAndReleaseRoundTrip() {
    Instant now = redisNow();
    Instant overdue = now.minusSeconds(1);
    Instant later = now.plus(Duration.ofHours(1));
    schedule.schedule("ns/a/1", overdue);
    schedule.schedule("ns/b/2", later);

    ClaimBatch batch = schedule.claimDue(10, LONG_LEASE);
    assertThat(batch.entries())
        .extracting(ClaimedEntry::id, ClaimedEntry::due)
        .containsExactly(org.assertj.core.groups.Tuple.tuple("ns/a/1", overdue));
    ClaimedEntry claimed = batch.entries().get(0);
    assertThat(claimed.claimedAt()).isAfterOrEqualTo(claimed.due());
    assertThat(batch.nextDue()).contains(later);
    assertThat(schedule.counts())
        .extracting(ScheduleCounts::waiting, ScheduleCounts::inFlight)
        .containsExactly(1L, 1L);
    assertThat(schedule.inFlightIds()).containsExactly("ns/a/1");
    assertThat(schedule.claimDue(10, LONG_LEASE).entries())
        .as("a claimed entry is not claimed twice")
        .isEmpty();

    Instant retryAt =
        claimed.claimedAt().truncatedTo(java.time.temporal.ChronoUnit.MILLIS).minusMillis(1);
    schedule.release(claimed, retryAt);
    assertThat(schedule.inFlightIds()).isEmpty();
    ClaimBatch again = schedule.claimDue(10, LONG_LEASE);
    assertThat(again.entries()).extracting(ClaimedEntry::id).containsExactly("ns/a/1");
    assertThat(again.entries().get(0).due()).isEqualTo(retryAt);

    ScheduleProbe.acknowledge(schedule, again.entries().get(0));
    assertThat(schedule.inFlightIds()).isEmpty();
    assertThat(schedule.waitingEntries()).containsExactly(Map.entry("ns/b/2", later));
    assertThat(ScheduleProbe.earliestDue(schedule)).contains(later);

    schedule.cancel("ns/b/2");
    schedule.cancel("ns/b/2");
    assertThat(schedule.waitingEntries()).isEmpty();
    assertThat(ScheduleProbe.earliestDue(schedule)).isEmpty();
    assertThat(schedule.counts()).isEqualTo(new ScheduleCounts(0, 0, Duration.ZERO));
  }

  @Test
  void releaseAfterCancelOrAcknowledgeChangesNothing() {
    schedule.schedule("x", redisNow().minusSeconds(1));
    ClaimedEntry claimed = schedule.claimDue(1, LONG_LEASE).entries().get(0);
    schedule.cancel("x");
    schedule.release(claimed, claimed.claimedAt());
    assertThat(schedule.waitingEntries()).isEmpty();
    assertThat(schedule.inFlightIds()).isEmpty();
  }

  @Test
  void schedulingAClaimedEntryForTheSameDueTimeIsANoOpButANewDueTimeSchedulesIt() {
    Instant due = redisNow().minusSeconds(1);
    schedule.schedule("x", due);
    ClaimedEntry claimed = schedule.claimDue(1, LONG_LEASE).entries().get(0);

    schedule.schedule("x", due);
    assertThat(schedule.waitingEntries())
        .as("re-applying the same due time while it fires")
        .isEmpty();

    Instant moved = due.plus(Duration.ofHours(2));
    schedule.schedule("x", moved);
    assertThat(schedule.waitingEntries()).containsExactly(Map.entry("x", moved));
    schedule.release(claimed, claimed.claimedAt());
    assertThat(schedule.waitingEntries())
        .as("the newer schedule wins over the retry")
        .containsExactly(Map.entry("x", moved));
  }

  @Test
  void repairWritesOnlyWhatIsStillMissingOrEarly() {
    Instant due = redisNow().plus(Duration.ofHours(1)).truncatedTo(ChronoUnit.MILLIS);
    Instant retry = due.plusSeconds(30);

    assertThat(ScheduleProbe.repair(schedule, "missing", due)).isTrue();
    schedule.schedule("early", due.minusSeconds(60));
    assertThat(ScheduleProbe.repair(schedule, "early", due)).isTrue();
    schedule.schedule("retrying", retry);
    assertThat(ScheduleProbe.repair(schedule, "retrying", due)).isFalse();
    assertThat(schedule.waitingEntries())
        .containsOnly(
            Map.entry("missing", due), Map.entry("early", due), Map.entry("retrying", retry));

    // Claimed since the caller looked: the claim decides, the repair keeps out.
    schedule.schedule("claimed", redisNow().minusSeconds(1));
    ClaimedEntry claimed = schedule.claimDue(10, LONG_LEASE).entries().get(0);
    assertThat(ScheduleProbe.repair(schedule, "claimed", due)).isFalse();
    assertThat(schedule.waitingEntries()).doesNotContainKey("claimed");
    assertThat(schedule.inFlightIds()).containsExactly(claimed.id());
  }

  @Test
  void repairOfManyEntriesTakesFewCallsAndAppliesTheSameRuleToEach() {
    Instant due = redisNow().plus(Duration.ofHours(1)).truncatedTo(ChronoUnit.MILLIS);
    Map<String, Instant> wanted = new java.util.HashMap<>();
    for (int i = 0; i < 1_200; i++) { // more than two script calls' worth per shard
      wanted.put("bulk/" + i, due.plusMillis(i));
    }
    schedule.schedule("bulk/7", due.minusSeconds(60)); // early: moved
    schedule.schedule("bulk/8", due.plusSeconds(60)); // a retry time: left alone
    schedule.schedule("bulk/9", redisNow().minusSeconds(1));
    schedule.claimDue(10, LONG_LEASE); // bulk/9 claimed: left to its claim

    java.util.Set<String> written = schedule.repairAll(wanted);

    assertThat(written)
        .hasSize(1_198)
        .contains("bulk/0", "bulk/7", "bulk/1199")
        .doesNotContain("bulk/8", "bulk/9");
    Map<String, Instant> waiting = schedule.waitingEntries();
    assertThat(waiting)
        .hasSize(1_199)
        .containsEntry("bulk/7", due.plusMillis(7))
        .containsEntry("bulk/8", due.plusSeconds(60))
        .containsEntry("bulk/1199", due.plusMillis(1_199));
    assertThat(schedule.inFlightIds()).containsExactly("bulk/9");
  }

  @Test
  void aRepairThatWritesANewEarliestEntryWakesThePoller() {
    Instant far = redisNow().plus(Duration.ofHours(2)).truncatedTo(ChronoUnit.MILLIS);
    Instant soon = redisNow().plus(Duration.ofHours(1)).truncatedTo(ChronoUnit.MILLIS);
    schedule.schedule("far", far);
    java.util.List<Instant> wakeups = new java.util.concurrent.CopyOnWriteArrayList<>();
    try (AutoCloseable ignored = schedule.onWakeup(wakeups::add)) {
      assertThat(schedule.repairAll(Map.of("far", far)))
          .as("already there: nothing written")
          .isEmpty();
      assertThat(wakeups).isEmpty();
      schedule.repairAll(Map.of("soon", soon));
      assertThat(wakeups).containsExactly(soon);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  @Test
  void aNewLeaderTakesOverEveryClaimAtOnceLeaseOrNot() {
    Instant due = redisNow().minusSeconds(1).truncatedTo(ChronoUnit.MILLIS);
    schedule.schedule("held/by-the-dead", due);
    schedule.schedule("rescheduled/meanwhile", due);
    schedule.claimDue(10, LONG_LEASE);
    Instant later = due.plus(Duration.ofHours(1));
    schedule.schedule("rescheduled/meanwhile", later);

    assertThat(schedule.requeueAllClaims()).isEqualTo(2);

    // Back at the due time each was claimed for, unless scheduled anew meanwhile (that wins).
    assertThat(schedule.inFlightIds()).isEmpty();
    assertThat(schedule.waitingEntries())
        .containsOnly(
            Map.entry("held/by-the-dead", due), Map.entry("rescheduled/meanwhile", later));
    assertThat(schedule.claimDue(10, LONG_LEASE).entries())
        .extracting(ClaimedEntry::id)
        .containsExactly("held/by-the-dead");
  }

  @Test
  void anExpiredLeaseReturnsTheEntryAtItsOriginalDueTime() {
    Instant due = redisNow().minusSeconds(2);
    schedule.schedule("lease/short", due);
    ClaimedEntry first = schedule.claimDue(10, Duration.ofMillis(200)).entries().get(0);

    ClaimedEntry reclaimed =
        await()
            .atMost(Duration.ofSeconds(5))
            .pollInterval(Duration.ofMillis(20))
            .until(() -> schedule.claimDue(10, LONG_LEASE).entries(), entries -> !entries.isEmpty())
            .get(0);
    assertThat(reclaimed.id()).isEqualTo("lease/short");
    assertThat(reclaimed.due()).isEqualTo(due);
    // The lease deadline is kept in whole milliseconds of Redis's clock (claim.lua), so the
    // reclaim may come up to a millisecond's fraction before claimedAt + lease in microseconds.
    assertThat(reclaimed.claimedAt().truncatedTo(ChronoUnit.MILLIS))
        .isAfterOrEqualTo(first.claimedAt().truncatedTo(ChronoUnit.MILLIS).plusMillis(200));
  }

  /**
   * A leader claims an entry and stalls past its claim lease (a GC pause, a frozen node); its
   * successor claims the same entry again, for the same due time. When the old leader wakes, its
   * ack and release must not touch the successor's claim: the claim token tells them apart, where
   * (id, due time) cannot.
   */
  @Test
  void anOldClaimsAckOrReleaseLeavesItsSuccessorsClaimOfTheSameDueTimeAlone() {
    Instant due = redisNow().minusSeconds(1);
    schedule.schedule("ns/x/1", due);
    RedisSchedule leaderA = newSchedule();
    RedisSchedule leaderB = newSchedule();
    ClaimedEntry claimedByA = leaderA.claimDue(10, Duration.ofMillis(200)).entries().get(0);

    // A's lease runs out; B's claim first returns it to the due set, then claims it again.
    ClaimedEntry claimedByB =
        await()
            .atMost(Duration.ofSeconds(5))
            .pollInterval(Duration.ofMillis(20))
            .until(() -> leaderB.claimDue(10, LONG_LEASE).entries(), entries -> !entries.isEmpty())
            .get(0);
    assertThat(claimedByB.id()).isEqualTo(claimedByA.id());
    assertThat(claimedByB.due()).as("the same due time").isEqualTo(claimedByA.due());
    assertThat(claimedByB.token()).isNotEqualTo(claimedByA.token());

    // A wakes and reports what it was doing.
    ScheduleProbe.acknowledge(leaderA, claimedByA);
    assertThat(schedule.inFlightIds())
        .as("A's ack left B's claim in flight")
        .containsExactly("ns/x/1");
    leaderA.release(claimedByA, redisNow().minusMillis(1));
    assertThat(schedule.inFlightIds())
        .as("A's release left B's claim in flight")
        .containsExactly("ns/x/1");
    assertThat(schedule.waitingEntries()).as("A's release put nothing back").isEmpty();
    assertThat(schedule.claimDue(10, LONG_LEASE).entries())
        .as("nobody else can claim it while B holds it")
        .isEmpty();

    // B's claim works as usual.
    ScheduleProbe.acknowledge(leaderB, claimedByB);
    assertThat(schedule.inFlightIds()).isEmpty();
    assertThat(schedule.counts()).isEqualTo(new ScheduleCounts(0, 0, Duration.ZERO));
  }

  @Test
  void everyClaimHasItsOwnTokenNamingTheClaimer() {
    Instant due = redisNow().minusSeconds(1);
    for (int i = 0; i < 20; i++) {
      schedule.schedule("token/" + i, due);
    }
    RedisSchedule named = new RedisSchedule(connect(), prefix, shards(), "op-7");
    closeables.add(named);
    List<ClaimedEntry> first = new ArrayList<>();
    ClaimBatch batch;
    do {
      batch = named.claimDue(7, LONG_LEASE);
      first.addAll(batch.entries());
    } while (!batch.entries().isEmpty());
    assertThat(first)
        .hasSize(20)
        .allSatisfy(entry -> assertThat(entry.token()).startsWith("op-7:"));
    named.acknowledgeAll(first.subList(0, 10));
    first.subList(10, 20).forEach(entry -> named.release(entry, redisNow().minusMillis(1)));
    List<ClaimedEntry> again = claimAll(LONG_LEASE);
    assertThat(again)
        .extracting(ClaimedEntry::id)
        .containsExactlyInAnyOrderElementsOf(
            first.subList(10, 20).stream().map(ClaimedEntry::id).toList());
    List<String> tokens = new ArrayList<>();
    first.forEach(entry -> tokens.add(entry.token()));
    again.forEach(entry -> tokens.add(entry.token()));
    assertThat(tokens).as("no two claims share a token").doesNotHaveDuplicates();
  }

  /** Claims until nothing more is due (a sharded schedule may need several calls). */
  private List<ClaimedEntry> claimAll(Duration lease) {
    List<ClaimedEntry> all = new ArrayList<>();
    ClaimBatch batch;
    do {
      batch = schedule.claimDue(100, lease);
      all.addAll(batch.entries());
    } while (!batch.entries().isEmpty());
    return all;
  }

  @Test
  void fourConcurrentClaimersClaimEachOfTenThousandEntriesExactlyOnce() throws Exception {
    int total = 10_000;
    Instant due = redisNow().minusSeconds(1);
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      List<Future<?>> writes = new ArrayList<>();
      for (int writer = 0; writer < 4; writer++) {
        int offset = writer;
        writes.add(
            pool.submit(
                () ->
                    IntStream.range(0, total)
                        .filter(i -> i % 4 == offset)
                        .forEach(i -> schedule.schedule("task/" + i, due.plusMillis(i % 500)))));
      }
      for (Future<?> write : writes) {
        write.get();
      }
      assertThat(schedule.counts().waiting()).isEqualTo(total);

      Map<String, Integer> claimCounts = new ConcurrentHashMap<>();
      java.util.concurrent.atomic.AtomicInteger claimsMade =
          new java.util.concurrent.atomic.AtomicInteger();
      List<Future<?>> claimers = new ArrayList<>();
      for (int claimer = 0; claimer < 4; claimer++) {
        RedisSchedule own = newSchedule();
        claimers.add(
            pool.submit(
                () -> {
                  List<ClaimedEntry> entries;
                  do {
                    entries = own.claimDue(100, LONG_LEASE).entries();
                    entries.forEach(entry -> claimCounts.merge(entry.id(), 1, Integer::sum));
                    // Bounded: a script that claims an entry again would otherwise keep these loops
                    // going forever.
                  } while (!entries.isEmpty() && claimsMade.addAndGet(entries.size()) <= 2 * total);
                }));
      }
      for (Future<?> claimer : claimers) {
        claimer.get(5, java.util.concurrent.TimeUnit.MINUTES);
      }
      assertThat(claimCounts).hasSize(total);
      assertThat(claimCounts.values()).containsOnly(1);
      assertThat(schedule.counts().inFlight()).isEqualTo(total);
      assertThat(schedule.counts().waiting()).isZero();
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void scriptsStillRunAfterScriptFlush() {
    schedule.schedule("before", redisNow().minusSeconds(1));
    flushScripts();
    long fallbacks = schedule.noScriptFallbacks();

    schedule.schedule("after", redisNow().minusSeconds(1));
    assertThat(schedule.noScriptFallbacks()).isGreaterThan(fallbacks);
    List<ClaimedEntry> claimed = claimAll(LONG_LEASE);
    assertThat(claimed).extracting(ClaimedEntry::id).containsExactlyInAnyOrder("before", "after");
    schedule.acknowledgeAll(claimed);
    assertThat(schedule.counts()).isEqualTo(new ScheduleCounts(0, 0, Duration.ZERO));
  }

  @Test
  void nothingIsClaimedBeforeItsScoreByTheRedisClock() {
    Instant now = redisNow();
    int total = 300;
    // Due from 3 s on: 300 writes took more than 500 ms at load 25 on 2 cores, so the first was due
    // before the check below ran.
    for (int i = 0; i < total; i++) {
      schedule.schedule("early/" + i, now.plusMillis(3000 + i));
    }
    assertThat(schedule.claimDue(100, LONG_LEASE).entries()).as("nothing is due yet").isEmpty();
    List<ClaimedEntry> claims = new ArrayList<>();
    List<ClaimBatch> batches = new ArrayList<>();
    await()
        .atMost(Duration.ofSeconds(30))
        .pollInterval(Duration.ZERO)
        .until(
            () -> {
              ClaimBatch batch = schedule.claimDue(7, LONG_LEASE);
              batches.add(batch);
              claims.addAll(batch.entries());
              return claims.size() == total;
            });
    assertThat(claims)
        .allSatisfy(entry -> assertThat(entry.claimedAt()).isAfterOrEqualTo(entry.due()));
    assertThat(batches.size())
        .as("claims made while entries were not yet due")
        .isGreaterThan(total / 7);
  }

  @Test
  void claimingOneAtATimeReachesEveryShard() {
    Instant due = redisNow().minusSeconds(1);
    for (int i = 0; i < 30; i++) {
      schedule.schedule("single/" + i, due);
    }
    List<String> claimed = new ArrayList<>();
    ClaimBatch batch;
    do {
      batch = schedule.claimDue(1, LONG_LEASE);
      assertThat(batch.entries()).hasSizeLessThanOrEqualTo(1);
      batch.entries().forEach(entry -> claimed.add(entry.id()));
    } while (!batch.entries().isEmpty() || batch.moreDue());
    assertThat(claimed).hasSize(30).doesNotHaveDuplicates();
  }

  @Test
  void countsReportTheOldestOverdueAgeByTheRedisClock() {
    // Whole ms, as scores are: a due time in µs is rounded up to its ms, and could then read as up
    // to 1 ms less than 30 s overdue when the counts follow within that ms.
    Instant now = redisNow().truncatedTo(ChronoUnit.MILLIS);
    schedule.schedule("old", now.minusSeconds(30));
    schedule.schedule("new", now.minusSeconds(1));
    schedule.schedule("future", now.plusSeconds(60));
    ScheduleCounts counts = schedule.counts();
    assertThat(counts.waiting()).isEqualTo(3);
    assertThat(counts.oldestOverdue()).isBetween(Duration.ofSeconds(30), Duration.ofSeconds(35));
  }

  @Test
  void pollerHandsDueEntriesToTheHandlerAndAcknowledgesThem() {
    Instant now = redisNow();
    int total = 1_000;
    for (int i = 0; i < total; i++) {
      schedule.schedule("drain/" + i, now.minusMillis(i));
    }
    Map<String, ClaimedEntry> handled = new ConcurrentHashMap<>();
    List<String> handledTwice = new CopyOnWriteArrayList<>();
    SchedulePoller poller =
        newPoller(
            entry -> {
              // Recorded, not thrown: a throw on the handler pool would only become a retry.
              if (handled.putIfAbsent(entry.id(), entry) != null) {
                handledTwice.add(entry.id());
              }
              return Disposition.acknowledge();
            },
            SchedulePoller.Settings.defaults().withBatchSize(50));
    poller.start();
    await().atMost(Duration.ofSeconds(60)).until(() -> handled.size() == total);
    await().atMost(Duration.ofSeconds(30)).until(() -> schedule.counts().inFlight() == 0);
    assertThat(schedule.counts().waiting()).isZero();
    assertThat(handledTwice).as("entries handed to the handler twice").isEmpty();
    assertThat(poller.stats().handlerFailures()).isZero();
    assertThat(poller.stats().claims())
        .as("batch after batch, not one claim per entry")
        .isLessThan(total / 2);
  }

  @Test
  void anEarlierEntryScheduledInProcessWakesTheSleepingPoller() {
    Instant now = redisNow();
    schedule.schedule("far", now.plus(Duration.ofHours(1)));
    List<ClaimedEntry> handled = new CopyOnWriteArrayList<>();
    SchedulePoller poller =
        newPoller(
            entry -> {
              handled.add(entry);
              return Disposition.acknowledge();
            },
            SchedulePoller.Settings.defaults().withMaxIdleSleep(Duration.ofMinutes(1)));
    poller.start();
    await().atMost(Duration.ofSeconds(30)).until(() -> poller.stats().claims() >= 1);

    Instant due = redisNow().plusMillis(200);
    schedule.schedule("near", due);
    await().atMost(Duration.ofSeconds(30)).until(() -> !handled.isEmpty());
    assertThat(handled).extracting(ClaimedEntry::id).containsExactly("near");
    assertThat(handled.get(0).claimedAt())
        .isBetween(due, due.plusSeconds(30)); // not the 1 min idle cap (waits only)
  }

  @Test
  void anEarlierEntryScheduledByAnotherProcessWakesThePollerThroughPubSub() {
    Instant now = redisNow();
    schedule.schedule("far", now.plus(Duration.ofHours(1)));
    List<ClaimedEntry> handled = new CopyOnWriteArrayList<>();
    SchedulePoller poller =
        newPoller(
            entry -> {
              handled.add(entry);
              return Disposition.acknowledge();
            },
            SchedulePoller.Settings.defaults().withMaxIdleSleep(Duration.ofMinutes(1)));
    poller.start();
    await().atMost(Duration.ofSeconds(30)).until(() -> poller.stats().claims() >= 1);

    RedisSchedule otherProcess = newSchedule();
    Instant due = redisNow().plusMillis(200);
    otherProcess.schedule("near", due);
    await().atMost(Duration.ofSeconds(30)).until(() -> !handled.isEmpty());
    assertThat(handled).extracting(ClaimedEntry::id).containsExactly("near");
    assertThat(handled.get(0).claimedAt())
        .isBetween(due, due.plusSeconds(30)); // not the 1 min idle cap (waits only)
  }

  @Test
  void aFailingHandlerIsRetriedWithBackoffAndARetryDispositionIsHonoured() {
    schedule.schedule("flaky", redisNow().minusMillis(1));
    schedule.schedule("later", redisNow().minusMillis(1));
    Map<String, List<ClaimedEntry>> calls = new ConcurrentHashMap<>();
    SchedulePoller poller =
        newPoller(
            entry -> {
              List<ClaimedEntry> seen =
                  calls.computeIfAbsent(entry.id(), id -> new CopyOnWriteArrayList<>());
              seen.add(entry);
              if (entry.id().equals("flaky") && seen.size() < 3) {
                throw new IllegalStateException("transient failure " + seen.size());
              }
              if (entry.id().equals("later") && seen.size() == 1) {
                return Disposition.retryAt(entry.claimedAt().plusMillis(150));
              }
              return Disposition.acknowledge();
            },
            SchedulePoller.Settings.defaults()
                .withRetry(Duration.ofMillis(50), Duration.ofSeconds(1)));
    poller.start();

    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                calls.getOrDefault("flaky", List.of()).size() == 3
                    && calls.getOrDefault("later", List.of()).size() == 2);
    List<ClaimedEntry> flaky = calls.get("flaky");
    assertThat(Duration.between(flaky.get(0).claimedAt(), flaky.get(1).claimedAt()))
        .isGreaterThanOrEqualTo(Duration.ofMillis(50));
    assertThat(Duration.between(flaky.get(1).claimedAt(), flaky.get(2).claimedAt()))
        .isGreaterThanOrEqualTo(Duration.ofMillis(100));
    List<ClaimedEntry> later = calls.get("later");
    assertThat(later.get(1).claimedAt()).isAfterOrEqualTo(later.get(0).claimedAt().plusMillis(150));
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> schedule.counts().equals(new ScheduleCounts(0, 0, Duration.ZERO)));
    assertThat(poller.stats().handlerFailures()).isEqualTo(2);
  }

  @Test
  void entriesDueOnePerMillisecondFireAtTheirDueTimeNotAtTheIdleCap() {
    int total = 1_000;
    Instant start = redisNow().plusMillis(1_500);
    for (int i = 0; i < total; i++) {
      schedule.schedule("lag/" + i, start.plusMillis(i));
    }
    List<Long> lagsMicros = new CopyOnWriteArrayList<>();
    SchedulePoller poller =
        newPoller(
            entry -> {
              lagsMicros.add(Duration.between(entry.due(), entry.claimedAt()).toNanos() / 1_000);
              return Disposition.acknowledge();
            },
            SchedulePoller.Settings.defaults().withMaxIdleSleep(Duration.ofMinutes(1)));
    poller.start();
    await().atMost(Duration.ofSeconds(90)).until(() -> lagsMicros.size() == total);
    List<Long> sorted = lagsMicros.stream().sorted().toList();
    System.out.printf(
        "%s fire lag over %d entries at 1/ms: p50 %d us, p99 %d us, max %d us, %d claims%n",
        getClass().getSimpleName(),
        total,
        sorted.get(total / 2),
        sorted.get(total * 99 / 100),
        sorted.get(total - 1),
        poller.stats().claims());
    assertThat(sorted.get(0)).as("never early").isNotNegative();
    // The 5 ms p99 target is the benchmark's to measure on a quiet machine (ScheduleBenchmark).
    // This
    // bound only says the poller slept until each next entry, not the 1 min idle cap, and leaves
    // room
    // for a machine ten times slower than a busy 2-core one (p99 of 275 ms was seen at load 15).
    assertThat(sorted.get(total - 1)).as("max fire lag in us").isLessThan(30_000_000);
  }

  @Test
  void stopWaitsForHandlersInProgressAndFlushesTheirAcks() throws Exception {
    schedule.schedule("slow", redisNow().minusMillis(1));
    java.util.concurrent.CountDownLatch started = new java.util.concurrent.CountDownLatch(1);
    SchedulePoller poller =
        newPoller(
            entry -> {
              started.countDown();
              Thread.sleep(300); // a handler that takes a while: stop() must wait for it
              return Disposition.acknowledge();
            },
            SchedulePoller.Settings.defaults());
    poller.start();
    assertThat(started.await(5, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
    poller.stop();
    assertThat(poller.isRunning()).isFalse();
    assertThat(schedule.counts()).isEqualTo(new ScheduleCounts(0, 0, Duration.ZERO));
    assertThat(poller.stats().acknowledged()).isEqualTo(1);
  }

  @Test
  void serverIdentityIsStableWhileRedisRuns() {
    String identity = schedule.serverIdentity();
    assertThat(identity).isNotBlank().isEqualTo(newSchedule().serverIdentity());
    Optional<Instant> none = ScheduleProbe.earliestDue(schedule);
    assertThat(none).isEmpty();
  }
}
