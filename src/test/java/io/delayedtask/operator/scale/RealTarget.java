package io.delayedtask.operator.scale;

import io.delayedtask.operator.testing.AuditLog;
import io.delayedtask.operator.testing.RealKubernetes;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBindingBuilder;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBuilder;
import io.fabric8.kubernetes.api.model.rbac.PolicyRuleBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A real kube-apiserver + etcd of its own ({@link RealKubernetes#startDedicated}), so no test's
 * requests mix with the figures, writing an audit log of every request at Metadata level. The
 * harness is cluster admin (a client certificate); the operator runs as a ServiceAccount with a
 * TokenRequest token, so the audit log tells its requests apart by user name.
 */
final class RealTarget extends ScaleTarget {
  static final String OPERATOR_ACCOUNT = "delayedtask-operator";

  private final RealKubernetes kube;
  private final AuditLog audit;
  private String operatorUser;

  RealTarget() {
    audit = AuditLog.in(Path.of("target", "scale").toAbsolutePath());
    kube = RealKubernetes.startDedicated(audit.apiServerFlags());
    System.out.printf(
        "real API server %s at %s; audit log %s%n",
        kube.binaries().version(), kube.client().getMasterUrl(), audit.file());
  }

  @Override
  String name() {
    return "real";
  }

  @Override
  KubernetesClient client() {
    return kube.client();
  }

  @Override
  void createNamespace(String namespace) {
    kube.client()
        .namespaces()
        .resource(
            new NamespaceBuilder().withNewMetadata().withName(namespace).endMetadata().build())
        .create();
  }

  /**
   * A ServiceAccount in {@code namespace} bound to a ClusterRole with what the operator uses (the
   * chart's rules, broadened to every verb: this measures requests, not least privilege).
   */
  @Override
  Path operatorKubeconfig(String namespace) {
    KubernetesClient client = kube.client();
    client
        .serviceAccounts()
        .inNamespace(namespace)
        .resource(
            new ServiceAccountBuilder()
                .withNewMetadata()
                .withName(OPERATOR_ACCOUNT)
                .withNamespace(namespace)
                .endMetadata()
                .build())
        .createOr(existing -> existing.update());
    String role = "delayedtask-scale-" + namespace;
    client
        .rbac()
        .clusterRoles()
        .resource(
            new ClusterRoleBuilder()
                .withNewMetadata()
                .withName(role)
                .endMetadata()
                .withRules(
                    rule(
                        "delayedtask.io",
                        "delayedtasks",
                        "delayedtasks/status",
                        "delayedtasks/finalizers",
                        "delayedtaskqueues",
                        "delayedtaskqueues/status"),
                    rule("batch", "jobs", "jobs/status"),
                    rule("", "events"),
                    rule("events.k8s.io", "events"),
                    rule("coordination.k8s.io", "leases"),
                    rule("", "services"),
                    rule("discovery.k8s.io", "endpointslices"),
                    rule("", "pods"),
                    // What the chart's -addressables ClusterRole aggregates for Knative's Broker
                    // (RequestBudgetIT's stand-in).
                    rule("eventing.knative.dev", "brokers", "brokers/status"),
                    // The signing Secret's informer, as the chart grants it (sink.signing).
                    new PolicyRuleBuilder()
                        .withApiGroups("")
                        .withResources("secrets")
                        .withResourceNames(
                            io.delayedtask.operator.config.SinkConfig.DEFAULT_SIGNING_SECRET)
                        .withVerbs("list", "watch")
                        .build())
                .build())
        .createOr(existing -> existing.update());
    client
        .rbac()
        .clusterRoleBindings()
        .resource(
            new ClusterRoleBindingBuilder()
                .withNewMetadata()
                .withName(role)
                .endMetadata()
                .withNewRoleRef()
                .withApiGroup("rbac.authorization.k8s.io")
                .withKind("ClusterRole")
                .withName(role)
                .endRoleRef()
                .addNewSubject()
                .withKind("ServiceAccount")
                .withName(OPERATOR_ACCOUNT)
                .withNamespace(namespace)
                .endSubject()
                .build())
        .createOr(existing -> existing.update());
    operatorUser = "system:serviceaccount:" + namespace + ":" + OPERATOR_ACCOUNT;
    try {
      return kube.serviceAccountKubeconfig(
          namespace,
          OPERATOR_ACCOUNT,
          Files.createTempFile("kubeconfig-" + OPERATOR_ACCOUNT + "-", ".yaml"));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * Applies a CRD (a stand-in for Knative's, {@code testing/KnativeStandIns}) and waits until it is
   * served.
   */
  void applyCrd(Path file) {
    kube.applyCrd(file);
  }

  private static io.fabric8.kubernetes.api.model.rbac.PolicyRule rule(
      String group, String... resources) {
    return new PolicyRuleBuilder()
        .withApiGroups(group)
        .withResources(resources)
        .withVerbs("*")
        .build();
  }

  @Override
  Map<String, String> operatorEnvironment() {
    return Map.of();
  }

  @Override
  Map<String, Long> operatorRequests(Instant from, Instant to) {
    if (operatorUser == null) {
      throw new IllegalStateException("no operator identity yet: call operatorKubeconfig first");
    }
    return audit.count(operatorUser, from, to);
  }

  /** kube-apiserver and etcd, named by their executable. */
  @Override
  Map<String, ProcessHandle> serverProcesses() {
    Map<String, ProcessHandle> byName = new LinkedHashMap<>();
    for (ProcessHandle process : kube.processes()) {
      String command = process.info().command().orElse("pid " + process.pid());
      byName.put(Path.of(command).getFileName().toString(), process);
    }
    if (byName.size() < 2) {
      System.out.println("WARNING: found only " + byName.keySet() + " of kube-apiserver and etcd");
    }
    return byName;
  }

  @Override
  public void close() {
    kube.close();
  }
}
