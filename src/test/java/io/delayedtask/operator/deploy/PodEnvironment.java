package io.delayedtask.operator.deploy;

import io.delayedtask.operator.config.OperatorConfig;
import io.delayedtask.operator.config.SinkConfig;
import io.fabric8.kubernetes.api.model.EnvVar;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/** What the operator process sees of a manifest's environment, and what it is able to read. */
final class PodEnvironment {

  private PodEnvironment() {}

  /**
   * Every DELAYEDTASK_* variable the operator reads, from OperatorConfig's and SinkConfig's
   * constants.
   */
  static Set<String> contractVariables() {
    return Stream.of(OperatorConfig.class, SinkConfig.class)
        .flatMap(type -> Stream.of(type.getFields()))
        .filter(f -> Modifier.isStatic(f.getModifiers()) && f.getType() == String.class)
        .map(PodEnvironment::constant)
        .filter(v -> v.startsWith("DELAYEDTASK_"))
        .collect(Collectors.toSet());
  }

  /**
   * The environment as the kubelet would build it: ConfigMap entries first, then the container's
   * env (literal values, downward-API field references, and a stand-in for Secret references).
   */
  static Map<String, String> resolve(
      Map<String, String> fromConfigMap, List<EnvVar> env, String namespace, String podName) {
    Map<String, String> resolved = new HashMap<>(fromConfigMap);
    for (EnvVar variable : env) {
      if (variable.getValueFrom() == null) {
        resolved.put(variable.getName(), variable.getValue() == null ? "" : variable.getValue());
      } else if (variable.getValueFrom().getFieldRef() != null) {
        String field = variable.getValueFrom().getFieldRef().getFieldPath();
        switch (field) {
          case "metadata.namespace" -> resolved.put(variable.getName(), namespace);
          case "metadata.name" -> resolved.put(variable.getName(), podName);
          default -> throw new IllegalArgumentException("unexpected fieldRef " + field);
        }
      } else {
        resolved.put(
            variable.getName(),
            "from-secret-" + variable.getValueFrom().getSecretKeyRef().getName());
      }
    }
    return resolved;
  }

  private static String constant(Field field) {
    try {
      return (String) field.get(null);
    } catch (IllegalAccessException e) {
      throw new IllegalStateException(e);
    }
  }
}
