package io.delayedtask.operator.testing;

import java.util.Optional;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;

/** Skips (loudly) or fails (in CI) a {@link RequiresKwok} test when Jobs cannot really run here. */
final class KwokCondition implements ExecutionCondition {
  @Override
  public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
    Optional<String> why = whyNot();
    if (why.isEmpty()) {
      return ConditionEvaluationResult.enabled(
          "kube-controller-manager, kube-scheduler and kwok found");
    }
    if ("true".equalsIgnoreCase(System.getenv("CI"))) {
      throw new IllegalStateException(
          "CI must not skip tests of Jobs run by the real Job controller: " + why.get());
    }
    String line = "SKIPPED " + context.getDisplayName() + ": " + why.get();
    System.err.println("\n!!!!!!!! " + line + " !!!!!!!!\n");
    return ConditionEvaluationResult.disabled(line);
  }

  private static Optional<String> whyNot() {
    return ControlPlaneBinaries.find()
        .map(KwokCluster::missing)
        .orElse(
            Optional.of(
                "no kube-apiserver/etcd/kubectl under ${KUBE_API_TEST_DIR:-~/.kubeapitest}/k8s/: "
                    + "run tools/build-control-plane.sh"));
  }
}
