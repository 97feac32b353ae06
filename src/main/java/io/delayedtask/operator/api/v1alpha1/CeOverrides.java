package io.delayedtask.operator.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;
import java.util.Map;
import java.util.Set;

/**
 * CloudEvents extension attributes added to every delivery attempt (Knative's {@code ceOverrides}),
 * one {@code ce-<name>} header each, so a Knative Trigger or a receiver can route on them.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonIgnoreProperties(ignoreUnknown = true)
public class CeOverrides {
  /** Longest extension name: CloudEvents 1.0 asks producers for at most 20 characters. */
  public static final int NAME_MAX_LENGTH = 20;

  /** Longest extension value. */
  public static final int VALUE_MAX_LENGTH = 256;

  /** Most extensions one task may add (keeps the headers, and the CEL cost of the rules, small). */
  public static final int MAX_EXTENSIONS = 32;

  /** The shape of a name: 1 to 20 lowercase letters or digits (CloudEvents attribute naming). */
  public static final String NAME_SHAPE = "^[a-z0-9]{1," + NAME_MAX_LENGTH + "}$";

  /**
   * The prefix of the operator's own extensions (delayedtaskattempt, delayedtaskerrorcode, ...).
   */
  public static final String RESERVED_PREFIX = "delayedtask";

  /** The CloudEvents 1.0 context attributes and data: never an extension. */
  public static final Set<String> CLOUDEVENTS_ATTRIBUTES =
      Set.of(
          "id",
          "source",
          "specversion",
          "type",
          "time",
          "subject",
          "datacontenttype",
          "dataschema",
          "data");

  @Size(max = MAX_EXTENSIONS)
  @ValidationRule(
      value = "self.all(k, k.matches('" + NAME_SHAPE + "'))",
      message =
          "spec.ceOverrides.extensions: a name is 1 to 20 lowercase letters or digits (a CloudEvents "
              + "extension name), such as team or region")
  @ValidationRule(
      value =
          "self.all(k, !(k in ['id', 'source', 'specversion', 'type', 'time', 'subject', "
              + "'datacontenttype', 'dataschema', 'data']))",
      message =
          "spec.ceOverrides.extensions: id, source, specversion, type, time, subject, datacontenttype, "
              + "dataschema and data are CloudEvents attributes the operator sets; use another name")
  @ValidationRule(
      value = "self.all(k, !k.startsWith('" + RESERVED_PREFIX + "'))",
      message =
          "spec.ceOverrides.extensions: names beginning with delayedtask are the operator's own; use another "
              + "name")
  @ValidationRule(
      value = "self.all(k, size(self[k]) <= " + VALUE_MAX_LENGTH + ")",
      message = "spec.ceOverrides.extensions: a value is at most 256 characters")
  @JsonPropertyDescription(
      "CloudEvents extension attributes sent with every attempt, one ce-<name> header each "
          + "(ce-team: orders). A name is 1 to 20 lowercase letters or digits, not a CloudEvents attribute (id, source, "
          + "specversion, type, time, subject, datacontenttype, dataschema, data) and not beginning with delayedtask; a "
          + "value is at most 256 characters; at most 32 entries.")
  private Map<String, String> extensions;

  public CeOverrides() {}

  public CeOverrides(Map<String, String> extensions) {
    this.extensions = extensions;
  }

  public Map<String, String> getExtensions() {
    return extensions;
  }

  public void setExtensions(Map<String, String> extensions) {
    this.extensions = extensions;
  }
}
