package io.delayedtask.operator.api.v1alpha1;

/**
 * Reads a status without ever failing on one field (see {@link LenientDeserializer}). The status is
 * the operator's own record: a field it cannot read is left unset and the next status written
 * replaces it.
 */
final class DelayedTaskStatusDeserializer extends LenientDeserializer<DelayedTaskStatus> {
  DelayedTaskStatusDeserializer() {
    super(
        DelayedTaskStatus.class,
        "status",
        DelayedTaskStatus::new,
        DelayedTaskStatus::markUnreadable);
  }
}
