package io.delayedtask.operator.api.v1alpha1;

/** Reads a spec without ever failing on one field (see {@link LenientDeserializer}). */
final class DelayedTaskSpecDeserializer extends LenientDeserializer<DelayedTaskSpec> {
  DelayedTaskSpecDeserializer() {
    super(DelayedTaskSpec.class, "spec", DelayedTaskSpec::new, DelayedTaskSpec::markUnreadable);
  }
}
