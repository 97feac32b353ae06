package io.delayedtask.operator.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import io.fabric8.crd.generator.annotation.AdditionalPrinterColumn;
import io.fabric8.kubernetes.api.model.Namespaced;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.Kind;
import io.fabric8.kubernetes.model.annotation.Plural;
import io.fabric8.kubernetes.model.annotation.ShortNames;
import io.fabric8.kubernetes.model.annotation.Singular;
import io.fabric8.kubernetes.model.annotation.Version;

/** "Do this once, at that time": the resource users write (shared/API.md, "The resource"). */
@Group(DelayedTask.GROUP)
@Version(DelayedTask.VERSION)
@Kind("DelayedTask")
@Plural("delayedtasks")
@Singular("delayedtask")
@ShortNames("dt")
// kubectl prints the columns in this order (after NAME). The crd-generator sorts them by jsonPath,
// so api.PrinterColumnOrder puts them back in this order in the generated CRD (process-classes).
@AdditionalPrinterColumn(name = "Phase", jsonPath = ".status.phase", type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "Due", jsonPath = ".status.dueTime", type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "Job", jsonPath = ".status.jobName", type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "Age", jsonPath = ".metadata.creationTimestamp", type = AdditionalPrinterColumn.Type.DATE)
@JsonIgnoreProperties(ignoreUnknown = true)
public class DelayedTask extends CustomResource<DelayedTaskSpec, DelayedTaskStatus> implements Namespaced {
  public static final String GROUP = "delayedtask.io";
  public static final String VERSION = "v1alpha1";

  // No initStatus(): a task the operator has not seen yet has no status at all, so the first status
  // write adds it whole instead of patching fields of an object the API server does not have.
}
