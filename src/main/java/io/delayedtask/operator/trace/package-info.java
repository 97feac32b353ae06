/**
 * The operator's OpenTelemetry spans ({@code delayedtask.fire}, {@code delayedtask.deliver}),
 * linked to each task's trace. The SDK is configured by OpenTelemetry's own variables only and is
 * off, with no exporter thread, unless they ask for it.
 */
package io.delayedtask.operator.trace;
