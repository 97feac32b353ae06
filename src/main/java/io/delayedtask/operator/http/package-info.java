/**
 * The process's own HTTP endpoints: {@code /metrics}, {@code /healthz} and {@code /readyz}. They
 * report on the operator and do no work of their own: {@code /readyz} answers with the reason the
 * process cannot do its work, when there is one.
 */
package io.delayedtask.operator.http;
