package io.delayedtask.operator.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;

/**
 * Where a task's CloudEvent goes (Knative's Destination): a Service {@code ref} with {@code uri} as
 * its path, or an absolute {@code uri}. The same shape serves {@code spec.sink} and {@code
 * spec.delivery.deadLetterSink} (which may not set {@code audience}).
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonIgnoreProperties(ignoreUnknown = true)
@ValidationRule(
    value = "has(self.ref) || has(self.uri)",
    message = "set ref (a Service in this namespace) or uri (an absolute http:// or https:// URL)")
@ValidationRule(
    value = "!has(self.ref) || !has(self.uri) || self.uri.startsWith('/')",
    message = "with ref, uri is the path on the Service, such as /orders/cancel")
@ValidationRule(
    value =
        "has(self.ref) || !has(self.uri) || self.uri.startsWith('http://') "
            + "|| self.uri.startsWith('https://')",
    message = "without ref, uri must be an absolute http:// or https:// URL")
public class Destination {
  public static final int URI_MAX_LENGTH = 2048;

  @JsonPropertyDescription(
      "A v1 Service, or a Knative Addressable (any object whose status.address.url is set: "
          + "a Knative Service, Broker, Channel), in the task's namespace. A Service resolves to "
          + "http://<name>.<namespace>.svc.<cluster domain>, with the Service's port when that is not 80 (the port "
          + "named http, else the only port); an Addressable to its status.address.url, read at each attempt.")
  private ServiceReference ref;

  @Size(max = URI_MAX_LENGTH)
  @JsonPropertyDescription(
      "With ref: the path (and query) on the Service, such as /orders/cancel. Without ref: an "
          + "absolute http:// or https:// URL, accepted only when an entry of the operator's "
          + "DELAYEDTASK_SINK_ALLOWED_URIS allows it (compared by scheme, host, port and path segments); no userinfo "
          + "or fragment.")
  private String uri;

  @Size(max = 253)
  @JsonPropertyDescription(
      "Send a ServiceAccount token for exactly this audience as Authorization: Bearer: a token "
          + "of the ServiceAccount the operator's DELAYEDTASK_SINK_SERVICE_ACCOUNT names (default delayedtask-sender) in "
          + "the task's namespace; create it to opt in. Sent only over https or to a Service of this namespace, and "
          + "admitted only for an author who may create that ServiceAccount's tokens. Not for deadLetterSink.")
  private String audience;

  @JsonPropertyDescription(
      "Sign every attempt as the Standard Webhooks specification says (headers webhook-id, "
          + "webhook-timestamp, webhook-signature), with the secret in this key of the operator's signing Secret in the "
          + "task's namespace. An attempt whose secret is missing or malformed fails and is never sent unsigned.")
  private Signing signing;

  @Size(max = 65536)
  @JsonPropertyDescription(
      "PEM certificates trusted for https, besides the operator's default ones.")
  private String caCerts;

  public ServiceReference getRef() {
    return ref;
  }

  public void setRef(ServiceReference ref) {
    this.ref = ref;
  }

  public String getUri() {
    return uri;
  }

  public void setUri(String uri) {
    this.uri = uri;
  }

  public String getAudience() {
    return audience;
  }

  public void setAudience(String audience) {
    this.audience = audience;
  }

  public Signing getSigning() {
    return signing;
  }

  public void setSigning(Signing signing) {
    this.signing = signing;
  }

  public String getCaCerts() {
    return caCerts;
  }

  public void setCaCerts(String caCerts) {
    this.caCerts = caCerts;
  }
}
