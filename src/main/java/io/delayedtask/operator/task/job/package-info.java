/**
 * The Job a firing creates: its deterministic name, its labels and annotations, the firing's trace
 * context it carries as {@code TRACEPARENT}, and which API server answers to a creation are worth
 * retrying. Built here, created by the reconciler.
 */
package io.delayedtask.operator.task.job;
