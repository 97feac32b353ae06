package io.delayedtask.operator.reconcile;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicy;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The ValidatingAdmissionPolicies this operator ships, read from the plain manifests' file itself
 * ({@code k8s/15-admission-policy.yaml}, copied into the jar at build time: one source), and the
 * comparison of a cluster's policy with them by content: what it matches, its match conditions, its
 * variables and its validation expressions, with the API server's defaults removed.
 *
 * <p>Four variables are an installation's choices and are compared by form only: {@code
 * senderServiceAccount} must name the operator's sender ServiceAccount, {@code signingSecret} its
 * signing Secret, {@code operator} must be one string literal and {@code statusWriters} a list of
 * string literals. Messages, reasons and audit annotations do not decide what is admitted and are
 * not compared.
 */
public final class ShippedPolicies {
  /** Where the build puts the plain manifests' policy file. */
  public static final String RESOURCE = "/META-INF/delayed-task-operator/15-admission-policy.yaml";

  private static final Pattern STRING_LITERAL = Pattern.compile("'[^'\\\\]*'");
  private static final Pattern STRING_LIST =
      Pattern.compile("\\[\\s*('[^'\\\\]*'(\\s*,\\s*'[^'\\\\]*')*)?\\s*]");

  private static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();

  private final Map<String, Map<String, Object>> shipped;
  private final String senderServiceAccount;
  private final String signingSecret;

  public ShippedPolicies(
      List<ValidatingAdmissionPolicy> policies, String senderServiceAccount, String signingSecret) {
    this.senderServiceAccount = senderServiceAccount;
    this.signingSecret = signingSecret;
    Map<String, Map<String, Object>> byName = new LinkedHashMap<>();
    for (ValidatingAdmissionPolicy policy : policies) {
      byName.put(
          policy.getMetadata().getName(),
          normalized(policy)
              .orElseThrow(
                  () ->
                      new IllegalStateException(
                          "the shipped policy "
                              + policy.getMetadata().getName()
                              + " cannot be normalized")));
    }
    this.shipped = Map.copyOf(byName);
  }

  /** The policies of the file in the jar. */
  public static ShippedPolicies load(String senderServiceAccount, String signingSecret) {
    return new ShippedPolicies(
        read(ShippedPolicies.class.getResourceAsStream(RESOURCE)),
        senderServiceAccount,
        signingSecret);
  }

  /** The ValidatingAdmissionPolicies of a multi-document YAML stream. */
  public static List<ValidatingAdmissionPolicy> read(InputStream yaml) {
    if (yaml == null) {
      throw new IllegalStateException(
          "the jar has no " + RESOURCE + " (built without the k8s/ resource)");
    }
    try (yaml) {
      Object parsed = SERIALIZATION.unmarshal(yaml);
      List<?> items = parsed instanceof List<?> list ? list : List.of(parsed);
      List<ValidatingAdmissionPolicy> policies = new ArrayList<>();
      for (Object item : items) {
        if (item instanceof ValidatingAdmissionPolicy policy) {
          policies.add(policy);
        } else if (!(item instanceof HasMetadata)) {
          throw new IllegalStateException("not a Kubernetes object in " + RESOURCE + ": " + item);
        }
      }
      return policies;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * The names the shipped policies have in the plain manifests (the chart prefixes its release's
   * name).
   */
  public List<String> names() {
    return List.copyOf(shipped.keySet());
  }

  /** The shipped policy this one equals in content, if any. */
  public Optional<String> match(ValidatingAdmissionPolicy policy) {
    Optional<Map<String, Object>> form = normalized(policy);
    if (form.isEmpty()) {
      return Optional.empty();
    }
    return shipped.entrySet().stream()
        .filter(e -> e.getValue().equals(form.get()))
        .map(Map.Entry::getKey)
        .findFirst();
  }

  /**
   * What decides what a policy admits, without the API server's defaults; empty when it takes a
   * parameter (paramKind) or names the sender ServiceAccount wrongly, which no shipped policy does.
   */
  @SuppressWarnings("unchecked")
  Optional<Map<String, Object>> normalized(ValidatingAdmissionPolicy policy) {
    if (policy.getSpec() == null || policy.getSpec().getParamKind() != null) {
      return Optional.empty();
    }
    Map<String, Object> spec = SERIALIZATION.convertValue(policy.getSpec(), Map.class);
    Map<String, Object> form = new LinkedHashMap<>();
    form.put("matchConstraints", withoutDefaults(spec.get("matchConstraints")));
    form.put("matchConditions", withoutDefaults(spec.get("matchConditions")));
    List<Object> variables = new ArrayList<>();
    for (Object v : list(spec.get("variables"))) {
      Map<String, Object> variable = (Map<String, Object>) v;
      String name = String.valueOf(variable.get("name"));
      String expression = String.valueOf(variable.get("expression")).strip();
      variables.add(Map.of("name", name, "expression", parameter(name, expression)));
    }
    form.put("variables", variables);
    List<Object> validations = new ArrayList<>();
    for (Object v : list(spec.get("validations"))) {
      validations.add(String.valueOf(((Map<String, Object>) v).get("expression")).strip());
    }
    form.put("validations", validations);
    return Optional.of(form);
  }

  /**
   * An installation's choice as its form; any other expression stays as it is (and then compares
   * unequal).
   */
  private String parameter(String name, String expression) {
    return switch (name) {
      case "senderServiceAccount" ->
          expression.equals("'" + senderServiceAccount + "'") ? "<sender>" : expression;
      case "signingSecret" ->
          expression.equals("'" + signingSecret + "'") ? "<signing>" : expression;
      case "operator" -> STRING_LITERAL.matcher(expression).matches() ? "<string>" : expression;
      case "statusWriters" -> STRING_LIST.matcher(expression).matches() ? "<strings>" : expression;
      default -> expression;
    };
  }

  private static List<?> list(Object value) {
    return value instanceof List<?> list ? list : List.of();
  }

  /**
   * A copy without what the API server fills in when it stores a policy (matchPolicy Equivalent,
   * empty selectors, scope "*") and without nulls and empty maps and lists, so that the file and
   * the stored object compare equal.
   */
  @SuppressWarnings("unchecked")
  static Object withoutDefaults(Object value) {
    if (value instanceof Map<?, ?> map) {
      Map<String, Object> copy = new LinkedHashMap<>();
      for (Map.Entry<?, ?> e : ((Map<String, Object>) map).entrySet()) {
        Object v = withoutDefaults(e.getValue());
        String key = String.valueOf(e.getKey());
        boolean isDefault =
            ("matchPolicy".equals(key) && "Equivalent".equals(v))
                || ("scope".equals(key) && "*".equals(v));
        if (v != null
            && !isDefault
            && !(v instanceof Map<?, ?> m && m.isEmpty())
            && !(v instanceof List<?> l && l.isEmpty())) {
          copy.put(key, v);
        }
      }
      return copy;
    }
    if (value instanceof List<?> list) {
      List<Object> copy = new ArrayList<>();
      for (Iterator<?> it = list.iterator(); it.hasNext(); ) {
        copy.add(withoutDefaults(it.next()));
      }
      return copy;
    }
    return value;
  }
}
