package io.delayedtask.operator.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;

/**
 * A v1 Service, or a Knative Addressable (any object whose status.address.url is set), in the
 * task's own namespace (Knative's KReference, without a namespace).
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonIgnoreProperties(ignoreUnknown = true)
@ValidationRule(
    value =
        "self.apiVersion.matches(r'"
            + ServiceReference.API_VERSION
            + "') "
            + "&& self.kind.matches(r'"
            + ServiceReference.KIND
            + "') && (self.apiVersion != 'v1' || self.kind == 'Service')",
    message =
        "sink.ref must name a Service (apiVersion: v1, kind: Service) or a Knative Addressable such as "
            + "apiVersion: serving.knative.dev/v1, kind: Service or apiVersion: eventing.knative.dev/v1, kind: Broker")
public class ServiceReference {
  /**
   * An apiVersion: v1, or group/version (serving.knative.dev/v1, messaging.knative.dev/v1beta1).
   */
  public static final String API_VERSION =
      "^(v1|[a-z0-9]([-a-z0-9.]*[a-z0-9])?/v[0-9]+((alpha|beta)[0-9]+)?)$";

  /** A kind: a letter, then letters and digits (Service, Broker, InMemoryChannel). */
  public static final String KIND = "^[A-Za-z][A-Za-z0-9]*$";

  @Required
  @Size(max = 253)
  @JsonPropertyDescription(
      "v1 for a Service; a Knative Addressable's group/version as written, such as "
          + "serving.knative.dev/v1 or eventing.knative.dev/v1.")
  private String apiVersion;

  @Required
  @Size(max = 63)
  @JsonPropertyDescription(
      "Service (with apiVersion v1), or the Addressable's kind, such as Service or Broker.")
  private String kind;

  @Required
  @Size(max = 63)
  @Pattern("^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
  @JsonPropertyDescription(
      "The Service's name, in the task's namespace: a DNS label (lower-case letters, digits "
          + "and '-', at most 63 characters).")
  private String name;

  public ServiceReference() {}

  public ServiceReference(String apiVersion, String kind, String name) {
    this.apiVersion = apiVersion;
    this.kind = kind;
    this.name = name;
  }

  public String getApiVersion() {
    return apiVersion;
  }

  public void setApiVersion(String apiVersion) {
    this.apiVersion = apiVersion;
  }

  public String getKind() {
    return kind;
  }

  public void setKind(String kind) {
    this.kind = kind;
  }

  public String getName() {
    return name;
  }

  public void setName(String name) {
    this.name = name;
  }
}
