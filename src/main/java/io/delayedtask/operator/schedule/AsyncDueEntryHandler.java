package io.delayedtask.operator.schedule;

import java.util.concurrent.CompletionStage;

/**
 * Takes a claimed entry and settles it later, on a thread of its own choosing: the returned stage
 * completes with what to do with the claim. The operator hands each claim to the reconcile of its
 * task this way, so that one serialised path per task decides and writes (leader.DueClaims).
 *
 * <p>A stage that completes exceptionally, or with {@link Disposition#backoff}, is retried with the
 * poller's one backoff; one that does not complete within the claim lease is given up by the
 * poller, and the entry returns to the due set when its lease runs out.
 */
@FunctionalInterface
public interface AsyncDueEntryHandler {
  CompletionStage<Disposition> handle(ClaimedEntry entry);
}
