package io.delayedtask.operator.schedule;

import java.time.Instant;
import java.util.Optional;

/**
 * One snapshot of a queue (queue-counts.lua): entries not yet due, due and waiting, dispatches in
 * flight, the oldest waiting entry's due time, and how many the queue has dispatched in all.
 */
public record QueueCounts(
    long pending,
    long waiting,
    long inFlight,
    Optional<Instant> oldestWaiting,
    long dispatchedTotal) {}
