package io.delayedtask.operator.schedule;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.delayedtask.operator.api.v1alpha1.DelayedTaskQueueSpec;
import io.delayedtask.operator.leader.InformedQueues;
import io.delayedtask.operator.testing.RedisProcess;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Queues in a real redis-server (queue-claim.lua through RedisSchedule): pause, a missing queue,
 * resume oldest first, the token bucket's bound across two claimers and across a leader change in
 * the middle of a burst, the bucket's size without maxBurst, concurrency slots, and that a held
 * queue neither delays other entries nor costs claims while it waits.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class QueueClaimsIT {
  private static final Duration LEASE = Duration.ofMinutes(5);
  private static final QueueRef EMAILS = new QueueRef("shop", "emails");
  private static final QueueRef INVOICES = new QueueRef("shop", "invoices");

  private RedisProcess redis;
  private String prefix;
  private final List<RedisSchedule> opened = new ArrayList<>();
  private final List<QueueHold> holds = new CopyOnWriteArrayList<>();

  @BeforeAll
  void startRedis() {
    redis = RedisProcess.start();
  }

  @AfterAll
  void stopRedis() {
    redis.close();
  }

  @BeforeEach
  void freshKeys() {
    prefix = "q-" + UUID.randomUUID().toString().substring(0, 8);
    holds.clear();
  }

  @AfterEach
  void close() {
    opened.forEach(RedisSchedule::close);
    opened.clear();
  }

  /** A schedule as one operator process has it, every DelayedTaskQueue listed. */
  private RedisSchedule operator(String identity) {
    RedisSchedule schedule =
        new RedisSchedule(
            RedisConnections.standalone(
                redis.uri(), Optional.empty(), RedisConnections.DEFAULT_TIMEOUT),
            prefix,
            1,
            identity);
    schedule.onQueueHolds(holds::addAll);
    schedule.queueLimitsKnown();
    opened.add(schedule);
    return schedule;
  }

  private static Instant redisNow(RedisSchedule schedule) {
    return ScheduleProbe.serverTime(schedule).truncatedTo(java.time.temporal.ChronoUnit.MILLIS);
  }

  private static List<String> ids(ClaimBatch batch) {
    return batch.entries().stream().map(ClaimedEntry::id).toList();
  }

  @Test
  void aPausedQueueHoldsItsDueTasksReportsThemOnceAndResumesOldestFirst() {
    RedisSchedule schedule = operator("a");
    schedule.queueLimits(EMAILS, QueueLimits.paused());
    Instant now = redisNow(schedule);
    for (int i = 0; i < 5; i++) {
      // t4 is the oldest, t0 the youngest
      schedule.schedule(
          "shop/t" + i + "/u", now.minusSeconds(i + 1), Optional.of(EMAILS), Optional.empty());
    }
    schedule.schedule("shop/plain/u", now.minusSeconds(1));

    ClaimBatch first = schedule.claimDue(100, LEASE);

    assertThat(ids(first)).containsExactly("shop/plain/u");
    assertThat(holds)
        .extracting(QueueHold::id)
        .containsExactly("shop/t4/u", "shop/t3/u", "shop/t2/u", "shop/t1/u", "shop/t0/u");
    assertThat(holds)
        .allMatch(
            hold -> hold.reason().equals(QueueHold.QUEUE_PAUSED) && hold.queue().equals(EMAILS));
    holds.clear();
    assertThat(ids(schedule.claimDue(100, LEASE))).isEmpty();
    assertThat(holds).as("reported once, not per claim").isEmpty();

    schedule.queueLimits(EMAILS, QueueLimits.open(null, 0, null));
    ClaimBatch resumed = schedule.claimDue(4, LEASE); // 2 for the queue, 2 for the shard

    assertThat(ids(resumed)).containsExactly("shop/t4/u", "shop/t3/u");
    assertThat(resumed.entries()).allMatch(entry -> entry.queue().equals(Optional.of(EMAILS)));
    assertThat(ids(schedule.claimDue(100, LEASE)))
        .containsExactly("shop/t2/u", "shop/t1/u", "shop/t0/u");
  }

  @Test
  void aQueueThatDoesNotExistHoldsItsTasksUntilItIsCreated() {
    RedisSchedule schedule = operator("a");
    Instant now = redisNow(schedule);
    schedule.schedule("shop/early/u", now.minusSeconds(1), Optional.of(INVOICES), Optional.empty());

    assertThat(ids(schedule.claimDue(100, LEASE))).isEmpty();
    assertThat(holds).extracting(QueueHold::reason).containsExactly(QueueHold.QUEUE_MISSING);

    schedule.queueLimits(INVOICES, QueueLimits.open(null, 0, null));
    assertThat(ids(schedule.claimDue(100, LEASE))).containsExactly("shop/early/u");
  }

  @Test
  void aDeletedQueueReleasesItsTasksForThisOperatorAndTheNext() {
    RedisSchedule schedule = operator("a");
    schedule.queueLimits(EMAILS, QueueLimits.paused());
    Instant now = redisNow(schedule);
    schedule.schedule("shop/a/u", now.minusSeconds(1), Optional.of(EMAILS), Optional.empty());
    assertThat(ids(schedule.claimDue(100, LEASE))).isEmpty();

    schedule.queueLimits(EMAILS, QueueLimits.RELEASED);
    assertThat(ids(schedule.claimDue(100, LEASE))).containsExactly("shop/a/u");
    // Written into the released queue after this operator's last claim (not by a timer: a loaded
    // machine may take longer than any due time in the near future between two claims).
    schedule.schedule("shop/b/u", now.minusSeconds(1), Optional.of(EMAILS), Optional.empty());

    RedisSchedule next = operator("b"); // a new leader, which never saw the queue: not "missing"
    next.knowQueues(List.of(EMAILS));
    await()
        .atMost(Duration.ofSeconds(5))
        .until(() -> ids(next.claimDue(100, LEASE)).contains("shop/b/u"));
    assertThat(holds).extracting(QueueHold::reason).doesNotContain(QueueHold.QUEUE_MISSING);
  }

  @Test
  void aHeldQueueDelaysNoOtherEntryAndCostsNoClaimWhileItWaits() {
    RedisSchedule schedule = operator("a");
    schedule.queueLimits(EMAILS, QueueLimits.paused());
    schedule.queueLimits(INVOICES, QueueLimits.open(null, 0, null));
    Instant now = redisNow(schedule);
    for (int i = 0; i < 2_000; i++) {
      schedule.schedule(
          "shop/held-" + i + "/u",
          now.minusMillis(2_000 - i),
          Optional.of(EMAILS),
          Optional.empty());
    }
    schedule.schedule("shop/plain/u", now);
    schedule.schedule("shop/invoice/u", now, Optional.of(INVOICES), Optional.empty());

    List<String> claimed = new ArrayList<>();
    // Reporting 2,000 held tasks takes a few claims (500 per claim); the other entries come in the
    // first.
    claimed.addAll(ids(schedule.claimDue(100, LEASE)));
    assertThat(claimed).containsExactlyInAnyOrder("shop/plain/u", "shop/invoice/u");
    for (int i = 0; i < 5; i++) {
      schedule.claimDue(100, LEASE);
    }
    assertThat(holds).hasSize(2_000);

    long before = scriptCalls();
    for (int i = 0; i < 20; i++) {
      assertThat(schedule.claimDue(100, LEASE).entries()).isEmpty();
    }
    assertThat(scriptCalls() - before)
        .as("one claim per shard each time; the paused queue and the idle one are not asked")
        .isEqualTo(20);
  }

  @Test
  void concurrencySlotsAreTakenByClaimsAndFreedWhenTheDispatchEnds() {
    RedisSchedule schedule = operator("a");
    schedule.queueLimits(EMAILS, QueueLimits.open(null, 0, 3));
    Instant now = redisNow(schedule);
    for (int i = 0; i < 10; i++) {
      schedule.schedule(
          "shop/t" + i + "/u", now.minusMillis(100 - i), Optional.of(EMAILS), Optional.empty());
    }

    ClaimBatch first = schedule.claimDue(100, LEASE);
    assertThat(ids(first)).containsExactly("shop/t0/u", "shop/t1/u", "shop/t2/u");
    schedule.acknowledgeAll(first.entries()); // the claims are done; the dispatches still run
    assertThat(ids(schedule.claimDue(100, LEASE))).isEmpty();
    assertThat(holds).extracting(QueueHold::reason).containsOnly(QueueHold.CONCURRENCY_LIMITED);
    assertThat(schedule.queueCounts(EMAILS).inFlight()).isEqualTo(3);

    schedule.freeSlots(EMAILS, List.of("shop/t1/u"));
    assertThat(ids(schedule.claimDue(100, LEASE))).containsExactly("shop/t3/u");
    QueueCounts counts = schedule.queueCounts(EMAILS);
    assertThat(counts.waiting()).isEqualTo(6);
    assertThat(counts.inFlight()).isEqualTo(3);
    assertThat(counts.dispatchedTotal()).isEqualTo(4);

    schedule.cancel("shop/t0/u", Optional.of(EMAILS)); // a task deleted while its Job ran
    assertThat(ids(schedule.claimDue(100, LEASE))).containsExactly("shop/t4/u");
  }

  @Test
  void aNewLeaderTakesOverTheQueueClaimsAtOnceWithTheirSlotsFreed() {
    RedisSchedule old = operator("old");
    old.queueLimits(EMAILS, QueueLimits.open(null, 0, 2));
    Instant now = redisNow(old);
    for (int i = 0; i < 4; i++) {
      old.schedule(
          "shop/t" + i + "/u", now.minusMillis(100 - i), Optional.of(EMAILS), Optional.empty());
    }
    assertThat(ids(old.claimDue(100, LEASE))).containsExactly("shop/t0/u", "shop/t1/u");
    // The old leader dies with both claims unsettled and both slots taken.

    RedisSchedule leader = operator("new");
    leader.queueLimits(EMAILS, QueueLimits.open(null, 0, 2));
    leader.requeueAllClaims();

    // Back at once (the lease is 5 minutes) and oldest first, their slots free for them again.
    assertThat(ids(leader.claimDue(100, LEASE))).containsExactly("shop/t0/u", "shop/t1/u");
    QueueCounts counts = leader.queueCounts(EMAILS);
    assertThat(counts.inFlight()).as("each slot taken once, by the claim made again").isEqualTo(2);
    assertThat(counts.waiting()).isEqualTo(2);
    // Taken over once: its own claims are not requeued on its next claim.
    assertThat(ids(leader.claimDue(100, LEASE))).isEmpty();
    assertThat(holds).extracting(QueueHold::reason).contains(QueueHold.CONCURRENCY_LIMITED);

    // The same process leading again later takes over again (the claims in Redis may be another's).
    leader.requeueAllClaims();
    assertThat(ids(leader.claimDue(100, LEASE))).containsExactly("shop/t0/u", "shop/t1/u");
  }

  @Test
  void aNewLeaderOfAPausedQueueRequeuesTheClaimsAndFreesTheirSlots() {
    RedisSchedule old = operator("old");
    old.queueLimits(EMAILS, QueueLimits.open(null, 0, 1));
    Instant now = redisNow(old);
    old.schedule("shop/first/u", now.minusMillis(200), Optional.of(EMAILS), Optional.empty());
    old.schedule("shop/second/u", now.minusMillis(100), Optional.of(EMAILS), Optional.empty());
    assertThat(ids(old.claimDue(100, LEASE))).containsExactly("shop/first/u");

    RedisSchedule leader = operator("new");
    leader.queueLimits(EMAILS, QueueLimits.paused());
    leader.requeueAllClaims();
    assertThat(ids(leader.claimDue(100, LEASE))).isEmpty();
    QueueCounts paused = leader.queueCounts(EMAILS);
    assertThat(paused.waiting()).as("the claim is back in the due set").isEqualTo(2);
    assertThat(paused.inFlight()).as("no slot held for a claim that went back").isZero();
    assertThat(holds)
        .filteredOn(hold -> hold.id().equals("shop/first/u"))
        .extracting(QueueHold::reason)
        .containsExactly(QueueHold.QUEUE_PAUSED);

    leader.queueLimits(EMAILS, QueueLimits.open(null, 0, 1));
    assertThat(ids(leader.claimDue(100, LEASE)))
        .as("its one slot is free: not stuck one short")
        .containsExactly("shop/first/u");
  }

  @Test
  void twoOperatorsClaimingAtOnceStayWithinBurstPlusRateTimesTime() {
    double rate = 40;
    int burst = 5;
    RedisSchedule one = operator("one");
    RedisSchedule two = operator("two");
    for (RedisSchedule schedule : List.of(one, two)) {
      schedule.queueLimits(EMAILS, QueueLimits.open(rate, burst, null));
    }
    Instant now = redisNow(one);
    for (int i = 0; i < 300; i++) {
      one.schedule(
          "shop/t" + i + "/u", now.minusMillis(300 - i), Optional.of(EMAILS), Optional.empty());
    }

    List<Instant> claimedAt = Collections.synchronizedList(new ArrayList<>());
    long until = System.nanoTime() + Duration.ofMillis(1_500).toNanos();
    List<CompletableFuture<Void>> claimers =
        List.of(one, two).stream()
            .map(
                schedule ->
                    CompletableFuture.runAsync(
                        () -> {
                          while (System.nanoTime() < until) {
                            schedule
                                .claimDue(100, LEASE)
                                .entries()
                                .forEach(entry -> claimedAt.add(entry.claimedAt()));
                            LockSupport.parkNanos(
                                Duration.ofMillis(2)
                                    .toNanos()); // pacing the claims as a busy poller would
                          }
                        }))
            .toList();
    claimers.forEach(CompletableFuture::join);

    List<Long> millis =
        claimedAt.stream().map(Instant::toEpochMilli).sorted().collect(Collectors.toList());
    long span = millis.get(millis.size() - 1) - millis.get(0);
    // Every window from one claim to a later one: at most burst + rate × its length.
    for (int i = 0; i < millis.size(); i++) {
      for (int j = i; j < millis.size(); j++) {
        double bound = burst + rate * (millis.get(j) - millis.get(i)) / 1000.0;
        assertThat((double) (j - i + 1))
            .as("claims from %d to %d ms", millis.get(i), millis.get(j))
            .isLessThanOrEqualTo(bound + 1e-9);
      }
    }
    assertThat(millis.size())
        .as("the bucket is used, not starved")
        .isGreaterThanOrEqualTo(burst + (int) (rate * span / 1000.0 * 0.8));
  }

  /**
   * 500 tasks due at once; the leader dies in the middle of the burst with a batch claimed and not
   * settled, and the next one takes over: the bucket lives on in Redis, so the bound holds over
   * every window, the change included (a bucket reset would give the new leader maxBurst at once,
   * on top of what the old one had taken).
   */
  @Test
  void fiveHundredTasksDueAtOnceStayWithinTheBoundAcrossALeaderChangeInTheMiddle() {
    // A bucket that takes half a second to fill: the new leader claims within milliseconds of the
    // old one's last claim, so a reset bucket would show as up to maxBurst claims over the bound.
    double rate = 100;
    int burst = 50;
    RedisSchedule old = operator("old");
    RedisSchedule leader = operator("new");
    old.queueLimits(EMAILS, QueueLimits.open(rate, burst, null));
    Instant due = redisNow(old).minusMillis(1);
    for (int i = 0; i < 500; i++) {
      old.schedule("shop/t" + i + "/u", due, Optional.of(EMAILS), Optional.empty());
    }

    List<Long> claimedAt = new ArrayList<>();
    Set<String> fired = new HashSet<>();
    long oldLeadsUntil = System.nanoTime() + Duration.ofMillis(1_000).toNanos();
    List<ClaimedEntry> unsettled = List.of();
    while (System.nanoTime() < oldLeadsUntil) {
      old.acknowledgeAll(unsettled);
      unsettled.forEach(entry -> fired.add(entry.id()));
      unsettled = old.claimDue(100, LEASE).entries();
      unsettled.forEach(entry -> claimedAt.add(entry.claimedAt().toEpochMilli()));
      LockSupport.parkNanos(
          Duration.ofMillis(2).toNanos()); // pacing the claims as a busy poller would
    }
    // The old leader dies here, its last batch claimed and not settled.
    assertThat(fired.size())
        .as("the change comes in the middle of the burst")
        .isBetween(burst, 400);
    Set<String> leftUnsettled = new HashSet<>();
    unsettled.forEach(entry -> leftUnsettled.add(entry.id()));

    leader.queueLimits(EMAILS, QueueLimits.open(rate, burst, null));
    leader.requeueAllClaims();
    Set<String> claimedByTheNew = new HashSet<>();
    long giveUp = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (fired.size() < 500 && System.nanoTime() < giveUp) {
      List<ClaimedEntry> batch = leader.claimDue(100, LEASE).entries();
      batch.forEach(entry -> claimedAt.add(entry.claimedAt().toEpochMilli()));
      leader.acknowledgeAll(batch);
      batch.forEach(
          entry -> {
            fired.add(entry.id());
            claimedByTheNew.add(entry.id());
          });
      LockSupport.parkNanos(
          Duration.ofMillis(2).toNanos()); // pacing the claims as a busy poller would
    }

    assertThat(fired).as("every task fired").hasSize(500);
    assertThat(claimedByTheNew)
        .as("the old leader's unsettled claims, claimed again")
        .containsAll(leftUnsettled);
    assertWithinBurstPlusRateTimesTime(claimedAt, burst, rate);
  }

  /**
   * Without maxBurst the bucket holds max(1, ceil(maxDispatchesPerSecond)), however long it was
   * idle.
   */
  @Test
  void withoutMaxBurstTheBucketHoldsTheRateRoundedUpAndAtLeastOne() {
    RedisSchedule schedule = operator("a");
    schedule.queueLimits(EMAILS, InformedQueues.limitsOf(rateOnly(2.5)));
    schedule.queueLimits(INVOICES, InformedQueues.limitsOf(rateOnly(0.5)));
    Instant now = redisNow(schedule);
    for (int i = 0; i < 20; i++) {
      schedule.schedule(
          "shop/e" + i + "/u", now.minusSeconds(1), Optional.of(EMAILS), Optional.empty());
      schedule.schedule(
          "shop/i" + i + "/u", now.minusSeconds(1), Optional.of(INVOICES), Optional.empty());
    }

    Map<QueueRef, Long> first = claimedPerQueue(schedule.claimDue(100, LEASE));
    assertThat(first)
        .as("a full bucket at first")
        .containsEntry(EMAILS, 3L)
        .containsEntry(INVOICES, 1L);

    // An hour idle (each bucket's last refill moved back by an hour): full, not over.
    RedisClient client = RedisClient.create(redis.uri());
    try (StatefulRedisConnection<String, String> connection = client.connect()) {
      for (QueueRef queue : List.of(EMAILS, INVOICES)) {
        String bucket = schedule.keys().bucket(queue);
        long at = Long.parseLong(connection.sync().hget(bucket, "at"));
        connection.sync().hset(bucket, "at", Long.toString(at - 3_600_000));
      }
    } finally {
      client.shutdown();
    }
    Map<QueueRef, Long> afterIdle = new HashMap<>();
    await("each queue polled at its next token")
        .atMost(Duration.ofSeconds(10))
        .until(
            () -> {
              claimedPerQueue(schedule.claimDue(100, LEASE)).forEach(afterIdle::putIfAbsent);
              return afterIdle.size() == 2;
            });
    assertThat(afterIdle).containsEntry(EMAILS, 3L).containsEntry(INVOICES, 1L);
  }

  private static DelayedTaskQueueSpec rateOnly(double rate) {
    DelayedTaskQueueSpec spec = new DelayedTaskQueueSpec();
    spec.setMaxDispatchesPerSecond(rate);
    return spec;
  }

  private static Map<QueueRef, Long> claimedPerQueue(ClaimBatch batch) {
    return batch.entries().stream()
        .filter(entry -> entry.queue().isPresent())
        .collect(Collectors.groupingBy(entry -> entry.queue().get(), Collectors.counting()));
  }

  /** Every window from one claim to a later one: at most burst + rate × its length. */
  private static void assertWithinBurstPlusRateTimesTime(
      List<Long> claimedAt, int burst, double rate) {
    List<Long> millis = claimedAt.stream().sorted().toList();
    for (int i = 0; i < millis.size(); i++) {
      for (int j = i; j < millis.size(); j++) {
        double bound = burst + rate * (millis.get(j) - millis.get(i)) / 1000.0;
        if (j - i + 1 > bound + 1e-9) {
          throw new AssertionError(
              String.format(
                  "%d claims from %d to %d ms, over the bound %.2f",
                  j - i + 1, millis.get(i), millis.get(j), bound));
        }
      }
    }
  }

  /** EVALSHA calls the Redis server has answered so far. */
  private long scriptCalls() {
    RedisClient client = RedisClient.create(redis.uri());
    try (StatefulRedisConnection<String, String> connection = client.connect()) {
      String stats = connection.sync().info("commandstats");
      return stats
          .lines()
          .filter(line -> line.startsWith("cmdstat_evalsha:"))
          .findFirst()
          .map(line -> Long.parseLong(line.replaceAll("^cmdstat_evalsha:calls=([0-9]+),.*", "$1")))
          .orElse(0L);
    } finally {
      client.shutdown();
    }
  }
}
