/**
 * The contract's times and durations: the one format every time in a status or annotation is
 * written in (UTC, milliseconds), and the durations {@code spec.delay} and the delivery settings
 * accept. Below every other package of the task rules, and depending on none.
 */
package io.delayedtask.operator.task.time;
