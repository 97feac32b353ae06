/**
 * The parts of a decision, in one vocabulary: what becomes of a task's schedule entry and of the
 * claim that woke it, the Events it records and the outcomes /metrics counts. The decider ({@code
 * reconcile/}) and the sink's delivery rules ({@code sink/}) both decide in these types and nothing
 * translates between them; this package depends on nothing of the operator's.
 */
package io.delayedtask.operator.decision;
