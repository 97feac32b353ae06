package io.delayedtask.operator.schedule;

import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Test-only: a handler that blocks and returns its verdict, run on a pool of its own so it never
 * blocks the poller's loop (the operator's handler, leader.DueClaims, is asynchronous). If it
 * throws, the poller releases the entry with its backoff.
 */
@FunctionalInterface
public interface DueEntryHandler {
  Disposition handle(ClaimedEntry entry) throws Exception;

  /** {@code handler} as the poller takes it, on 8 daemon threads shared by every such handler. */
  static AsyncDueEntryHandler blocking(DueEntryHandler handler) {
    return entry ->
        CompletableFuture.supplyAsync(
            () -> {
              try {
                return Objects.requireNonNull(
                    handler.handle(entry), "the handler returned no Disposition");
              } catch (Exception e) {
                throw new CompletionException(e);
              }
            },
            Threads.POOL);
  }

  /** The shared pool (an interface cannot hold a private field). */
  final class Threads {
    private static final AtomicInteger COUNTER = new AtomicInteger();
    static final ExecutorService POOL =
        Executors.newFixedThreadPool(
            8,
            runnable -> {
              Thread thread = new Thread(runnable, "test-handler-" + COUNTER.incrementAndGet());
              thread.setDaemon(true);
              return thread;
            });

    private Threads() {}
  }
}
