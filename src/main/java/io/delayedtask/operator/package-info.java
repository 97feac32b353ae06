/**
 * The operator process: {@link io.delayedtask.operator.DelayedTaskOperator} reads the
 * configuration, builds the clients, the schedule ({@code ScheduleWiring}) and the sink ({@code
 * SinkWiring}), starts JOSDK and the HTTP endpoints, and stops them in reverse. Everything below is
 * built here and handed down through constructors; {@code DESIGN.md} beside this file is the map of
 * the packages.
 */
package io.delayedtask.operator;
