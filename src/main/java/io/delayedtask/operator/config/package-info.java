/**
 * The operator's configuration, read once from the environment and checked whole at start: a bad
 * value stops the process with one message naming the variable and what it accepts. The other
 * packages receive the parsed records and never read the environment themselves.
 */
package io.delayedtask.operator.config;
