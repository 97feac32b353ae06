package io.delayedtask.operator.testing;

import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.platform.commons.support.AnnotationSupport;

/**
 * Skips (loudly) or fails (in CI) a {@link RequiresRealKubernetes} class when the binaries are
 * missing.
 */
final class RealKubernetesCondition implements ExecutionCondition {
  @Override
  public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
    String minor =
        AnnotationSupport.findAnnotation(context.getElement(), RequiresRealKubernetes.class)
            .map(RequiresRealKubernetes::minor)
            .orElse("");
    if (ControlPlaneBinaries.find(minor).isPresent()) {
      return ConditionEvaluationResult.enabled("real Kubernetes binaries found");
    }
    String why;
    if (minor.isEmpty()) {
      if (RealKubernetes.downloadAllowed()) {
        return ConditionEvaluationResult.enabled(
            "kube-api-test downloads the binaries (DELAYEDTASK_KUBE_DOWNLOAD=true)");
      }
      why =
          "no kube-apiserver/etcd/kubectl under ${KUBE_API_TEST_DIR:-~/.kubeapitest}/k8s/: "
              + "run tools/build-control-plane.sh, or with internet set DELAYEDTASK_KUBE_DOWNLOAD=true";
    } else {
      // kube-api-test downloads only the newest envtest release: an older one is built or absent.
      why =
          "no Kubernetes "
              + minor
              + " kube-apiserver/etcd/kubectl under ${KUBE_API_TEST_DIR:-~/.kubeapitest}/k8s/"
              + minor
              + ".*-linux-amd64/: run tools/build-control-plane.sh (it builds "
              + minor
              + " beside the newest)";
    }
    if ("true".equalsIgnoreCase(System.getenv("CI"))) {
      throw new IllegalStateException("CI must not skip real-API-server tests: " + why);
    }
    String line = "SKIPPED " + context.getDisplayName() + ": " + why;
    System.err.println("\n!!!!!!!! " + line + " !!!!!!!!\n");
    return ConditionEvaluationResult.disabled(line);
  }
}
