package io.delayedtask.operator.schedule;

/**
 * What the poller does with each claimed entry (the operator fires the task). It returns what to
 * do with the claim; if it throws, the poller releases the entry with backoff.
 */
@FunctionalInterface
public interface DueEntryHandler {
  Disposition handle(ClaimedEntry entry) throws Exception;
}
