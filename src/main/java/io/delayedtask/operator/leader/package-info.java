/**
 * What only the Lease holder does: keep the Redis schedule in step with the tasks (resync, takeover
 * of a dead predecessor's claims), poll for due entries and hand each claim to its task's
 * reconcile, and keep the queues' limits and status. It starts when this instance becomes leader
 * and stops, handing every unsettled claim back, when it stops leading.
 */
package io.delayedtask.operator.leader;
