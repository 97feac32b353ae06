package io.delayedtask.operator.schedule;

import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * What one claim returned: the entries now in flight, the Redis clock at the claim, and the
 * earliest due time still waiting (what the poller sleeps until).
 */
public record ClaimBatch(List<ClaimedEntry> entries, Instant serverTime, Optional<Instant> nextDue) {}
