/**
 * Standard Webhooks signatures for sink deliveries: the signing Secret of a task's namespace,
 * learned from a watch (no request per attempt), and the {@code webhook-*} headers computed from
 * it. An attempt that should be signed and cannot be fails with a message naming the Secret, the
 * key and the fix; nothing is sent unsigned.
 */
package io.delayedtask.operator.sink.signing;
