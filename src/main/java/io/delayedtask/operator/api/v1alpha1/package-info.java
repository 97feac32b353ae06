/**
 * The {@code delayedtask.io/v1alpha1} API: the {@code DelayedTask} and {@code DelayedTaskQueue}
 * resources as Java types, from which the build generates the CRDs. Their fields, defaults and
 * validation rules are the contract in docs/reference.md; nothing here decides or does I/O.
 */
package io.delayedtask.operator.api.v1alpha1;
