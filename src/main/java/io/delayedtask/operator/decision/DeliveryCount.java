package io.delayedtask.operator.decision;

/**
 * How a recorded sink delivery attempt counts on /metrics ({@code
 * delayedtask_deliveries_total{outcome}}).
 */
public enum DeliveryCount {
  DELIVERED,
  RETRY,
  FAILED,
  DEAD_LETTERED
}
