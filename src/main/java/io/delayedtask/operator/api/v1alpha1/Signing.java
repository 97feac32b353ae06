package io.delayedtask.operator.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;

/**
 * {@code sink.signing} (and {@code deadLetterSink.signing}): sign every attempt as the Standard
 * Webhooks specification says, with the secret in key {@code key} of the operator's signing Secret
 * in the task's namespace (docs/reference.md, "Delivering to a service").
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonIgnoreProperties(ignoreUnknown = true)
public class Signing {
  /**
   * A Secret's data key: letters, digits, '-', '_' and '.' (Kubernetes' own rule for ConfigMap and
   * Secret keys).
   */
  public static final String KEY = "^[-._a-zA-Z0-9]+$";

  @Required
  @Size(min = 1, max = 253)
  @Pattern(KEY)
  @JsonPropertyDescription(
      "The key, in the Secret the operator's DELAYEDTASK_SINK_SIGNING_SECRET names (default "
          + "delayedtask-signing) in the task's namespace, whose value is the signing secret in the Standard Webhooks "
          + "form whsec_<base64> (several separated by spaces while rotating). Every attempt then carries the headers "
          + "webhook-id, webhook-timestamp and webhook-signature. Admitted only for an author who may get that Secret.")
  private String key;

  public Signing() {}

  public Signing(String key) {
    this.key = key;
  }

  public String getKey() {
    return key;
  }

  public void setKey(String key) {
    this.key = key;
  }
}
