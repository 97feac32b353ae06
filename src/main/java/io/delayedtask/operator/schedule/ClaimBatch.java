package io.delayedtask.operator.schedule;

import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * What one claim returned: the entries now in flight, the Redis clock at the claim, and the
 * earliest due time still waiting (what the poller sleeps until).
 */
public record ClaimBatch(
    List<ClaimedEntry> entries, Instant serverTime, Optional<Instant> nextDue) {

  /**
   * True when entries were already due but left behind by the cap (with several shards each
   * contributes at most its part of max per call): claim again at once.
   */
  public boolean moreDue() {
    return nextDue.isPresent() && !nextDue.get().isAfter(serverTime);
  }
}
