package io.delayedtask.operator.deploy;

import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;

/** RBAC rules flattened to "group/resource[names]: verbs" lines, so tests compare them exactly. */
final class Rbac {

  private Rbac() {
  }

  /** One line per API group and resource (and resource names), verbs sorted and merged. */
  static Set<String> grants(List<PolicyRule> rules) {
    Map<String, Set<String>> verbsByTarget = new TreeMap<>();
    for (PolicyRule rule : rules) {
      String names = rule.getResourceNames() == null || rule.getResourceNames().isEmpty()
          ? "" : new TreeSet<>(rule.getResourceNames()).toString();
      for (String group : rule.getApiGroups()) {
        for (String resource : rule.getResources()) {
          verbsByTarget.computeIfAbsent(group + "/" + resource + names, k -> new TreeSet<>()).addAll(rule.getVerbs());
        }
      }
    }
    return verbsByTarget.entrySet().stream()
        .map(e -> e.getKey() + ": " + String.join(",", e.getValue()))
        .collect(Collectors.toCollection(TreeSet::new));
  }

  /** The sender ServiceAccount's name by default (sink.serviceAccount, DELAYEDTASK_SINK_SERVICE_ACCOUNT). */
  static final String SENDER = "delayedtask-sender";

  /**
   * What the operator needs on its resources, wherever it watches them: tokens only of the sender
   * ServiceAccount named {@code sender} (for a sink.audience), and a Service only by name (sink.ref).
   */
  static Set<String> operator(String sender) {
    return Set.of(
        "delayedtask.io/delayedtasks: delete,get,list,patch,update,watch",
        "delayedtask.io/delayedtasks/status: get,patch,update",
        "delayedtask.io/delayedtasks/finalizers: update",
        "batch/jobs: create,get,list,watch",
        "/events: create,get,patch",
        "events.k8s.io/events: create,patch",
        "/serviceaccounts/token[" + sender + "]: create",
        "/services: get");
  }

  /** {@link #operator} with the default sender ServiceAccount. */
  static final Set<String> OPERATOR = operator(SENDER);

  /**
   * Leader election, in the operator's namespace only. JOSDK checks get/create/update before it
   * starts; fabric8's LeaseLock then renews with a JSON merge patch.
   */
  static Set<String> leaderElection(String leaseName) {
    return Set.of(
        "coordination.k8s.io/leases: create",
        "coordination.k8s.io/leases[" + leaseName + "]: get,patch,update");
  }

  static final Set<String> USER_EDIT = Set.of(
      "delayedtask.io/delayedtasks: create,delete,deletecollection,get,list,patch,update,watch",
      "delayedtask.io/delayedtasks/status: get,list,watch");

  static final Set<String> USER_VIEW = Set.of(
      "delayedtask.io/delayedtasks: get,list,watch",
      "delayedtask.io/delayedtasks/status: get,list,watch");

  /** True when a rule names Secrets in any group, or uses a wildcard that could cover them. */
  static boolean mentionsSecretsOrWildcards(PolicyRule rule) {
    return rule.getResources().stream().anyMatch(r -> r.equals("*") || r.equals("secrets") || r.startsWith("secrets/"))
        || rule.getApiGroups().contains("*")
        || rule.getVerbs().contains("*");
  }
}
