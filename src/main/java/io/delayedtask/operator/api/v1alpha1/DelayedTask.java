package io.delayedtask.operator.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonClassDescription;
import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.crd.generator.annotation.AdditionalPrinterColumn;
import io.fabric8.kubernetes.api.model.Namespaced;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.Kind;
import io.fabric8.kubernetes.model.annotation.Plural;
import io.fabric8.kubernetes.model.annotation.ShortNames;
import io.fabric8.kubernetes.model.annotation.Singular;
import io.fabric8.kubernetes.model.annotation.Version;

/** "Do this once, at that time": the resource users write (docs/reference.md, "The resource"). */
@Group(DelayedTask.GROUP)
@Version(DelayedTask.VERSION)
@Kind("DelayedTask")
@Plural("delayedtasks")
@Singular("delayedtask")
@ShortNames("dt")
// kubectl prints the columns in this order (after NAME). The crd-generator sorts them by jsonPath,
// so api.PrinterColumnOrder puts them back in this order in the generated CRD (process-classes).
@AdditionalPrinterColumn(
    name = "Phase",
    jsonPath = ".status.phase",
    type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(
    name = "Due",
    jsonPath = ".status.dueTime",
    type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(
    name = "Job",
    jsonPath = ".status.jobName",
    type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(
    name = "Age",
    jsonPath = ".metadata.creationTimestamp",
    type = AdditionalPrinterColumn.Type.DATE)
// kubectl get dt -o wide only (priority 1): a sink task's attempts and where the last one went.
@AdditionalPrinterColumn(
    name = "Attempts",
    jsonPath = ".status.delivery.attempts",
    type = AdditionalPrinterColumn.Type.INTEGER,
    priority = 1)
@AdditionalPrinterColumn(
    name = "Sink",
    jsonPath = ".status.sinkUri",
    type = AdditionalPrinterColumn.Type.STRING,
    priority = 1)
@JsonIgnoreProperties(ignoreUnknown = true)
@JsonClassDescription(
    "A task that fires once, at a time: at spec.runAt, or spec.delay after its creation. "
        + "Firing does one of three things: creates a Job from spec.jobTemplate; sends a CloudEvent over HTTP to "
        + "spec.sink (a Service, a Knative Addressable such as a Broker, or an allowed URL), retried as spec.delivery "
        + "says; or, with neither, only records it in the status. The operator reports the phase, the due time it "
        + "computed and the outcome (the Job, or the delivery attempts and status.sinkUri) in status.")
public class DelayedTask extends CustomResource<DelayedTaskSpec, DelayedTaskStatus>
    implements Namespaced {
  public static final String GROUP = "delayedtask.io";
  public static final String VERSION = "v1alpha1";

  // The spec and status fields live in CustomResource; these overrides exist only to carry their
  // descriptions into the generated CRD (kubectl explain dt.spec, dt.status): the crd-generator
  // 7.5.2
  // reads a property's description from Jackson, which merges an overriding getter's annotations.
  @Override
  @JsonPropertyDescription(
      "When the task fires, once: at runAt, or delay after its creation (exactly one of the "
          + "two). What firing does: create a Job from jobTemplate; or send a CloudEvent to sink (data or the payload as "
          + "its body, ceOverrides as extra attributes), retried as delivery says; or, with neither, only record it in "
          + "the status. At most one of jobTemplate and sink.")
  public DelayedTaskSpec getSpec() {
    return super.getSpec();
  }

  @Override
  @JsonPropertyDescription(
      "What the operator observed, written only by it: the phase, the due time it computed, "
          + "when the task fired and its Job or its delivery (attempts, sinkUri), a message, and conditions that kstatus, "
          + "Flux and Argo CD read.")
  public DelayedTaskStatus getStatus() {
    return super.getStatus();
  }

  // No initStatus(): a task the operator has not seen yet has no status at all, so the first status
  // write adds it whole instead of patching fields of an object the API server does not have.
}
