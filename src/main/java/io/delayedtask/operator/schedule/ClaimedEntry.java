package io.delayedtask.operator.schedule;

import java.time.Instant;
import java.util.Objects;

/**
 * An entry this process claimed: its id, the due time it was claimed for, when (Redis clock), and
 * the claim's token. Acknowledging or releasing the entry acts only while the token is still the
 * claim's: once the lease ran out and another poller claimed it again, even for the same due
 * time, this claim can no longer touch it.
 */
public record ClaimedEntry(String id, Instant due, Instant claimedAt, String token) {
  public ClaimedEntry {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(due, "due");
    Objects.requireNonNull(claimedAt, "claimedAt");
    Objects.requireNonNull(token, "token");
  }
}
