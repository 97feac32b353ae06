package io.delayedtask.operator.api.v1alpha1;

/**
 * Reads a spec without ever failing on one field (see {@link LenientDeserializer}); a jobTemplate
 * larger than {@link DelayedTaskSpec#JOB_TEMPLATE_MAX_BYTES} is not read (the task is Invalid).
 */
final class DelayedTaskSpecDeserializer extends LenientDeserializer<DelayedTaskSpec> {
  DelayedTaskSpecDeserializer() {
    super(
        DelayedTaskSpec.class,
        "spec",
        DelayedTaskSpec::new,
        DelayedTaskSpec::markUnreadable,
        java.util.Map.of("jobTemplate", DelayedTaskSpec.JOB_TEMPLATE_MAX_BYTES));
  }
}
