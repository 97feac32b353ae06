/**
 * What a task's spec asks for: {@link io.delayedtask.operator.task.spec.SpecValidator} checks it
 * again (the CRD's rules are not enforced by every API server) and computes its due time ({@code
 * DueTimes}), remembering each verdict per generation; rules of fields another package owns come in
 * through {@link io.delayedtask.operator.task.spec.SpecRules}. No I/O: the task in hand (its spec,
 * creation time and recorded due time) is all it reads.
 */
package io.delayedtask.operator.task.spec;
