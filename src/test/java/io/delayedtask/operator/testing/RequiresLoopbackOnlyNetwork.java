package io.delayedtask.operator.testing;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A test class that starts the operator with the real resolver and sockets (as a process, or a
 * sandbox around it), so that a wrong code path could send a packet off the machine: it runs only
 * in a network namespace that has only loopback (failsafe's {@code loopback-only-network} execution
 * in pom.xml, through tools/loopback-only/bin/java). Anywhere else it is skipped with one loud line
 * on a developer machine and fails in CI (CI=true), so CI never runs it on the host's network nor
 * skips it. Such a class must be in that execution's list ({@code loopbackOnlyITs} in pom.xml).
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@ExtendWith(LoopbackOnlyNetworkCondition.class)
public @interface RequiresLoopbackOnlyNetwork {}
