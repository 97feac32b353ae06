package io.delayedtask.operator.schedule;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The queues this process polls, with their limits and when each is to be claimed next (Redis
 * clock, ms). A queue is polled only when something can come of it: a paused, missing or
 * concurrency-full queue waits for a change (its DelayedTaskQueue, a slot freed, an entry falling
 * due that is still to be marked Queued); a rate-limited one for its next token. Polling is thereby
 * O(queues) whatever number of tasks wait, and a held queue never holds up another's claims or the
 * shards'.
 */
final class QueueGroups {
  /** Poll at once. */
  static final long NOW = 0;

  /** Not until something changes. */
  static final long PARKED = Long.MAX_VALUE;

  /** Held ids reported per poll (queue-claim.lua ARGV[9]). */
  static final int REPORT = 500;

  /** A queue to claim from now, with its limits and what it reported last. */
  record Poll(QueueRef queue, QueueLimits limits, String watermark, boolean takeOver) {}

  private static final class State {
    QueueLimits limits;
    boolean informed;
    long pollAt = NOW;
    String heldReason = "";
    String watermark = "-inf";

    /**
     * Its claims in Redis may be a previous leader's: the next claim returns them all to the due
     * set first. A queue new to this process has never been claimed from by it.
     */
    boolean takeOver = true;
  }

  private final Map<QueueRef, State> groups = new HashMap<>();
  private boolean limitsKnown;

  /**
   * The DelayedTaskQueue's limits (created or changed): polled at once, its held tasks marked anew.
   * Returns whether they changed.
   */
  synchronized boolean limits(QueueRef queue, QueueLimits limits) {
    State state = groups.computeIfAbsent(queue, q -> new State());
    boolean changed = !limits.equals(state.limits);
    state.limits = limits;
    state.informed = true;
    if (changed) {
      state.pollAt = NOW;
      state.watermark = "-inf";
    }
    return changed;
  }

  /** Every DelayedTaskQueue is known: a queue not among them is missing. */
  synchronized void limitsKnown() {
    limitsKnown = true;
    groups.values().forEach(state -> state.pollAt = NOW);
  }

  /**
   * A task waits in this queue: polled from now on (as missing until its DelayedTaskQueue is seen).
   */
  synchronized void know(QueueRef queue) {
    groups.computeIfAbsent(queue, q -> new State());
  }

  synchronized boolean knows(QueueRef queue) {
    return groups.containsKey(queue);
  }

  synchronized List<QueueRef> all() {
    return List.copyOf(groups.keySet());
  }

  /** The limits in effect, if the queue is known. */
  synchronized Optional<QueueLimits> limitsOf(QueueRef queue) {
    State state = groups.get(queue);
    return state == null ? Optional.empty() : Optional.of(effective(state));
  }

  /**
   * An entry scored {@code score} was written into the queue: poll it by then, and report it if it
   * is held.
   */
  synchronized void scheduled(QueueRef queue, long score) {
    State state = groups.computeIfAbsent(queue, q -> new State());
    state.pollAt = Math.min(state.pollAt, score);
    if (!"-inf".equals(state.watermark) && score <= Long.parseLong(state.watermark)) {
      state.watermark = Long.toString(score - 1);
    }
  }

  /** Something it waited for changed (a slot freed): poll it at once. */
  synchronized void wake(QueueRef queue) {
    State state = groups.get(queue);
    if (state != null) {
      state.pollAt = NOW;
    }
  }

  /** The queues to claim from at {@code now} (Redis clock, ms, estimated). */
  synchronized List<Poll> toPoll(long now) {
    List<Poll> polls = new ArrayList<>();
    if (!limitsKnown) {
      return polls;
    }
    groups.forEach(
        (queue, state) -> {
          if (state.pollAt <= now) {
            polls.add(new Poll(queue, effective(state), state.watermark, state.takeOver));
          }
        });
    return polls;
  }

  /**
   * This process became the leader: the claims in every queue are taken over on its next claim of
   * the queue (each queue is polled once its limits are known, paused or not).
   */
  synchronized void takeOverAll() {
    groups
        .values()
        .forEach(
            state -> {
              state.takeOver = true;
              state.pollAt = NOW;
            });
  }

  /** The previous leader's claims of the queue are back in its due set. */
  synchronized void tookOver(QueueRef queue) {
    State state = groups.get(queue);
    if (state != null) {
      state.takeOver = false;
    }
  }

  /** A queue given no share of a claim: polled on the next one. */
  synchronized void skipped(QueueRef queue) {
    wake(queue);
  }

  /**
   * What a claim of the queue left: {@code held} due entries waiting for {@code reason} ('' when
   * only the claim's size left them), the next entry not yet due, the next token, and how far held
   * entries were reported ({@code watermark}, {@code reportedAll}: nothing held was left
   * unreported).
   */
  synchronized void polled(
      QueueRef queue,
      long held,
      String reason,
      Optional<Long> nextLater,
      Optional<Long> nextToken,
      String watermark,
      boolean reportedAll) {
    State state = groups.get(queue);
    if (state == null) {
      return;
    }
    long later = nextLater.orElse(PARKED);
    if (held == 0) {
      state.heldReason = "";
      state.watermark = "-inf";
      state.pollAt = later;
      return;
    }
    if (!reason.equals(state.heldReason)) {
      // A new reason: every held task is told it, from the oldest.
      boolean first = state.heldReason.isEmpty();
      state.heldReason = reason;
      if (!first) {
        state.watermark = "-inf";
        state.pollAt = NOW;
        return;
      }
    }
    state.watermark = watermark;
    if (reason.isEmpty() || !reportedAll) {
      state.pollAt =
          NOW; // the claim's size left due entries, or held ones are still to be reported
    } else if (QueueHold.RATE_LIMITED.equals(reason)) {
      state.pollAt = Math.min(later, nextToken.orElse(later));
    } else {
      state.pollAt =
          later; // paused, missing, concurrency-full: until a change or the next entry falls due
    }
  }

  /** The earliest time a queue is to be polled, unless every queue waits for a change. */
  synchronized Optional<Long> nextPoll() {
    if (!limitsKnown) {
      return Optional.empty();
    }
    long next = groups.values().stream().mapToLong(state -> state.pollAt).min().orElse(PARKED);
    return next == PARKED ? Optional.empty() : Optional.of(next);
  }

  private QueueLimits effective(State state) {
    return state.informed ? state.limits : QueueLimits.MISSING;
  }
}
