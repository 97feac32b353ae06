package io.delayedtask.operator.schedule;

import java.time.Instant;

/** An entry this process claimed: its id, the due time it was claimed for, and when (Redis clock). */
public record ClaimedEntry(String id, Instant due, Instant claimedAt) {}
