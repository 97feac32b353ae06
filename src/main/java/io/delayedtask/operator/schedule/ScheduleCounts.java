package io.delayedtask.operator.schedule;

import java.time.Duration;

/** Gauges for /metrics: entries waiting, in flight, and how long the oldest due one is overdue. */
public record ScheduleCounts(long waiting, long inFlight, Duration oldestOverdue) {}
