package io.delayedtask.operator.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;

/** A v1 Service in the task's own namespace (Knative's KReference, without a namespace). */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonIgnoreProperties(ignoreUnknown = true)
@ValidationRule(value = "self.apiVersion == 'v1' && self.kind == 'Service'",
    message = "sink.ref must name a Service: apiVersion: v1, kind: Service")
public class ServiceReference {
  @Required
  @Size(max = 16)
  @JsonPropertyDescription("v1")
  private String apiVersion;

  @Required
  @Size(max = 16)
  @JsonPropertyDescription("Service")
  private String kind;

  @Required
  @Size(max = 63)
  @Pattern("^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
  @JsonPropertyDescription("The Service's name, in the task's namespace: a DNS label (lower-case letters, digits "
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
