/**
 * What the informers keep of tasks and Jobs: no managedFields, and a large task without its large
 * fields (marked, so its reconcile reads it whole first). The stores are handed to JOSDK's and the
 * sink's informers; nothing here makes a request.
 */
package io.delayedtask.operator.task.cache;
