package io.delayedtask.operator.testing;

import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;

/** Skips (loudly) or fails (in CI) a {@link RequiresRealKubernetes} class when the binaries are missing. */
final class RealKubernetesCondition implements ExecutionCondition {
  @Override
  public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
    if (ControlPlaneBinaries.find().isPresent()) {
      return ConditionEvaluationResult.enabled("real Kubernetes binaries found");
    }
    if (RealKubernetes.downloadAllowed()) {
      return ConditionEvaluationResult.enabled("kube-api-test downloads the binaries (DELAYEDTASK_KUBE_DOWNLOAD=true)");
    }
    String why = "no kube-apiserver/etcd/kubectl under ${KUBE_API_TEST_DIR:-~/.kubeapitest}/k8s/: "
        + "run tools/build-control-plane.sh, or with internet set DELAYEDTASK_KUBE_DOWNLOAD=true";
    if ("true".equalsIgnoreCase(System.getenv("CI"))) {
      throw new IllegalStateException("CI must not skip real-API-server tests: " + why);
    }
    String line = "SKIPPED " + context.getDisplayName() + ": " + why;
    System.err.println("\n!!!!!!!! " + line + " !!!!!!!!\n");
    return ConditionEvaluationResult.disabled(line);
  }
}
