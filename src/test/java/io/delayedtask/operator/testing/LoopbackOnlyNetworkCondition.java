package io.delayedtask.operator.testing;

import java.util.List;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Skips (loudly) or fails (in CI) a {@link RequiresLoopbackOnlyNetwork} class outside a
 * loopback-only namespace.
 */
final class LoopbackOnlyNetworkCondition implements ExecutionCondition {
  @Override
  public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
    List<String> others = LoopbackOnlyNetwork.otherInterfacesUp();
    if (others.isEmpty()) {
      return ConditionEvaluationResult.enabled("in a network namespace with only loopback");
    }
    String why =
        "this JVM sees interfaces "
            + others
            + " up, not only loopback: it starts the operator with the "
            + "real resolver and sockets, so it runs only in failsafe's loopback-only-network execution "
            + "(tools/loopback-only/bin/java, which needs unshare --net: root or CAP_SYS_ADMIN, and ip(8)); "
            + "select it with -DloopbackOnlyITs="
            + context.getRequiredTestClass().getSimpleName()
            + " -Dit.test=none, not with -Dit.test";
    if ("true".equalsIgnoreCase(System.getenv("CI"))) {
      throw new IllegalStateException(
          "CI must not run this test on the host's network nor skip it: " + why);
    }
    String line = "SKIPPED " + context.getDisplayName() + ": " + why;
    System.err.println("\n!!!!!!!! " + line + " !!!!!!!!\n");
    return ConditionEvaluationResult.disabled(line);
  }
}
