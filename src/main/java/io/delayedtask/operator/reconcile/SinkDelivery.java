package io.delayedtask.operator.reconcile;

import io.delayedtask.operator.sink.DeliveryOutcomes;
import io.delayedtask.operator.sink.DeliveryStarter;

/**
 * How a reconcile delivers a sink task: an attempt is sent without waiting, and its outcome comes
 * back as an event, whose reconcile records it.
 *
 * @param starter sends an attempt (after the status write that decided it)
 * @param outcomes the attempts in flight and their outcomes, an event source of the reconciler
 */
public record SinkDelivery(DeliveryStarter starter, DeliveryOutcomes outcomes) {}
