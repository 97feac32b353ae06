package io.delayedtask.operator.deploy;

import io.delayedtask.operator.testing.AuditLog;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.PolicyRuleBuilder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * RBAC rules, and the requests an audit log shows, flattened to "group/resource[names]: verbs"
 * lines, so tests compare them exactly; what the operator uses is the checked-in {@link #USED}.
 */
final class Rbac {

  private Rbac() {}

  /** One line per API group and resource (and resource names), verbs sorted and merged. */
  static Set<String> grants(List<PolicyRule> rules) {
    Map<String, Set<String>> verbsByTarget = new TreeMap<>();
    for (PolicyRule rule : rules) {
      String names =
          rule.getResourceNames() == null || rule.getResourceNames().isEmpty()
              ? ""
              : new TreeSet<>(rule.getResourceNames()).toString();
      for (String group : rule.getApiGroups()) {
        for (String resource : rule.getResources()) {
          verbsByTarget
              .computeIfAbsent(group + "/" + resource + names, k -> new TreeSet<>())
              .addAll(rule.getVerbs());
        }
      }
    }
    return verbsByTarget.entrySet().stream()
        .map(e -> e.getKey() + ": " + String.join(",", e.getValue()))
        .collect(Collectors.toCollection(TreeSet::new));
  }

  /**
   * The sender ServiceAccount's name by default (sink.serviceAccount,
   * DELAYEDTASK_SINK_SERVICE_ACCOUNT).
   */
  static final String SENDER = "delayedtask-sender";

  /**
   * The checked-in record of what the operator asks of the API server (src/test/resources/deploy/
   * operator-rbac.txt), which {@link RbacFromAuditLogIT} compares with a real API server's audit
   * log.
   */
  static final Path USED = Path.of("src", "test", "resources", "deploy", "operator-rbac.txt");

  static final String OPERATOR_SECTION = "operator";
  static final String LEADER_ELECTION_SECTION = "leader-election";
  static final String ADMISSION_POLICY_SECTION = "admission-policy";

  /** What the operator uses to watch the admission policy's presence (a ClusterRole of its own). */
  static Set<String> admissionPolicy() {
    return section(ADMISSION_POLICY_SECTION, Map.of());
  }

  /**
   * What the operator uses wherever it watches tasks (the ClusterRole, or a Role per watched
   * namespace), with {@code sender} for the ServiceAccount whose tokens it requests
   * (sink.audience).
   */
  static Set<String> operator(String sender) {
    return section(OPERATOR_SECTION, Map.of("{sender}", sender, "{signing}", SIGNING));
  }

  /** The signing Secret's name by default (sink.signingSecret, DELAYEDTASK_SINK_SIGNING_SECRET). */
  static final String SIGNING = "delayedtask-signing";

  /** {@link #operator} with the default sender ServiceAccount. */
  static final Set<String> OPERATOR = operator(SENDER);

  /**
   * What leader election uses, in the Lease's namespace only, for the Lease named {@code
   * leaseName}.
   */
  static Set<String> leaderElection(String leaseName) {
    return section(LEADER_ELECTION_SECTION, Map.of("{lease}", leaseName));
  }

  /** The lines of each section of {@link #USED}, placeholders kept. */
  static Map<String, Set<String>> checkedIn() {
    Map<String, Set<String>> sections = new TreeMap<>();
    Set<String> current = null;
    try {
      for (String line : Files.readAllLines(USED)) {
        String text = line.strip();
        if (text.isEmpty() || text.startsWith("#")) {
          continue;
        }
        if (text.startsWith("[") && text.endsWith("]")) {
          current =
              sections.computeIfAbsent(text.substring(1, text.length() - 1), k -> new TreeSet<>());
        } else if (current == null) {
          throw new IllegalStateException(USED + ": a grant before any [section]: " + text);
        } else {
          current.add(text);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return sections;
  }

  private static Set<String> section(String name, Map<String, String> values) {
    Set<String> lines = checkedIn().get(name);
    if (lines == null) {
      throw new IllegalStateException(USED + " has no [" + name + "]");
    }
    return fill(lines, values);
  }

  /** {@code lines} with each placeholder ("{lease}") replaced by its value. */
  static Set<String> fill(Set<String> lines, Map<String, String> values) {
    return lines.stream()
        .map(
            line -> {
              String filled = line;
              for (Map.Entry<String, String> value : values.entrySet()) {
                filled = filled.replace(value.getKey(), value.getValue());
              }
              return filled;
            })
        .collect(Collectors.toCollection(TreeSet::new));
  }

  /**
   * Lines of {@link #grants} merged: the verbs of lines for the same resource (and names) in one
   * line.
   */
  static Set<String> merge(Collection<String> lines) {
    Map<String, Set<String>> verbsByTarget = new TreeMap<>();
    for (String line : lines) {
      int colon = line.lastIndexOf(": ");
      verbsByTarget
          .computeIfAbsent(line.substring(0, colon), k -> new TreeSet<>())
          .addAll(List.of(line.substring(colon + 2).split(",")));
    }
    return verbsByTarget.entrySet().stream()
        .map(e -> e.getKey() + ": " + String.join(",", e.getValue()))
        .collect(Collectors.toCollection(TreeSet::new));
  }

  /**
   * Requests flattened to the lines {@link #grants} makes of rules: one per group and resource,
   * with the verbs used. A verb whose every request named (in its URL, which is what resourceNames
   * match) the object one of {@code placeholders}' values names is limited to it, written as the
   * placeholder ("{lease}"); any other use needs the verb on every object of the resource.
   */
  static Set<String> used(List<AuditLog.Request> requests, Map<String, String> placeholders) {
    Map<String, Map<String, Set<String>>> namesByVerbByTarget = new TreeMap<>();
    for (AuditLog.Request request : requests) {
      namesByVerbByTarget
          .computeIfAbsent(request.target(), k -> new TreeMap<>())
          .computeIfAbsent(request.verb(), k -> new TreeSet<>())
          .add(request.name() == null ? "" : request.name());
    }
    List<PolicyRule> rules = new ArrayList<>();
    namesByVerbByTarget.forEach(
        (target, namesByVerb) ->
            namesByVerb.forEach(
                (verb, names) -> {
                  String group = target.substring(0, target.indexOf('/'));
                  String resource = target.substring(target.indexOf('/') + 1);
                  List<String> limitedTo =
                      names.size() != 1
                          ? List.of()
                          : placeholders.entrySet().stream()
                              .filter(p -> p.getValue().equals(names.iterator().next()))
                              .map(Map.Entry::getKey)
                              .toList();
                  rules.add(
                      new PolicyRuleBuilder()
                          .withApiGroups(group)
                          .withResources(resource)
                          .withResourceNames(limitedTo)
                          .withVerbs(verb)
                          .build());
                }));
    return grants(rules);
  }

  static final Set<String> USER_EDIT =
      Set.of(
          "delayedtask.io/delayedtasks: create,delete,deletecollection,get,list,patch,update,watch",
          "delayedtask.io/delayedtasks/status: get,list,watch",
          "delayedtask.io/delayedtaskqueues: create,delete,deletecollection,get,list,patch,update,watch",
          "delayedtask.io/delayedtaskqueues/status: get,list,watch");

  static final Set<String> USER_VIEW =
      Set.of(
          "delayedtask.io/delayedtasks: get,list,watch",
          "delayedtask.io/delayedtasks/status: get,list,watch",
          "delayedtask.io/delayedtaskqueues: get,list,watch",
          "delayedtask.io/delayedtaskqueues/status: get,list,watch");

  /**
   * True when a rule names Secrets in any group, or uses a wildcard that could cover them; except
   * the one rule for the signing Secret: list and watch (its informer, by field selector) of one
   * Secret name in the core group, nothing else.
   */
  static boolean mentionsSecretsOrWildcards(PolicyRule rule) {
    return !isTheSigningSecretRule(rule)
        && (rule.getResources().stream()
                .anyMatch(r -> r.equals("*") || r.equals("secrets") || r.startsWith("secrets/"))
            || rule.getApiGroups().contains("*")
            || rule.getVerbs().contains("*"));
  }

  private static boolean isTheSigningSecretRule(PolicyRule rule) {
    return rule.getApiGroups().equals(List.of(""))
        && rule.getResources().equals(List.of("secrets"))
        && rule.getResourceNames() != null
        && rule.getResourceNames().size() == 1
        && Set.of("list", "watch").containsAll(rule.getVerbs());
  }
}
