package io.delayedtask.operator.sink;

import java.util.concurrent.CompletionStage;

/**
 * Sends delivery attempts without blocking the caller: the returned stage completes (never
 * exceptionally) when the attempt has an outcome. Requests in flight are bounded overall and per
 * host; beyond that they queue.
 */
public interface Sender extends AutoCloseable {
  CompletionStage<DeliveryResult> send(DeliveryRequest request);

  @Override
  void close();
}
