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

/**
 * The limits and the pause that the tasks of one namespace naming it in {@code spec.queue} share
 * (docs/reference.md, "Queues: rate, concurrency, pause").
 */
@Group(DelayedTask.GROUP)
@Version(DelayedTask.VERSION)
@Kind("DelayedTaskQueue")
@Plural("delayedtaskqueues")
@Singular("delayedtaskqueue")
@ShortNames("dtq")
// In this order after NAME (api.PrinterColumnOrder puts them back in it, as for DelayedTask).
@AdditionalPrinterColumn(
    name = "Paused",
    jsonPath = ".spec.paused",
    type = AdditionalPrinterColumn.Type.BOOLEAN)
@AdditionalPrinterColumn(
    name = "Rate",
    jsonPath = ".spec.maxDispatchesPerSecond",
    type = AdditionalPrinterColumn.Type.NUMBER)
@AdditionalPrinterColumn(
    name = "Concurrency",
    jsonPath = ".spec.maxConcurrentDispatches",
    type = AdditionalPrinterColumn.Type.INTEGER)
@AdditionalPrinterColumn(
    name = "Waiting",
    jsonPath = ".status.waiting",
    type = AdditionalPrinterColumn.Type.INTEGER)
@AdditionalPrinterColumn(
    name = "In-Flight",
    jsonPath = ".status.inFlight",
    type = AdditionalPrinterColumn.Type.INTEGER)
@AdditionalPrinterColumn(
    name = "Age",
    jsonPath = ".metadata.creationTimestamp",
    type = AdditionalPrinterColumn.Type.DATE)
@JsonIgnoreProperties(ignoreUnknown = true)
@JsonClassDescription(
    "A queue for the DelayedTasks of its namespace that name it in spec.queue, as a Cloud Tasks "
        + "queue: at most maxDispatchesPerSecond firings a second (a token bucket of maxBurst), at most "
        + "maxConcurrentDispatches in flight at once (Jobs not finished, sink requests not answered), and none at all "
        + "while paused. Tasks that fall due while held wait, and fire oldest-due first when the queue lets them.")
public class DelayedTaskQueue extends CustomResource<DelayedTaskQueueSpec, DelayedTaskQueueStatus>
    implements Namespaced {

  @Override
  @JsonPropertyDescription(
      "The queue's limits and its pause; every field optional (no limit, not paused).")
  public DelayedTaskQueueSpec getSpec() {
    return super.getSpec();
  }

  @Override
  @JsonPropertyDescription(
      "What the operator observed, written by it at most once per 5 s: the tasks pending, "
          + "waiting and in flight, the oldest waiting due time, the dispatches so far, and the conditions Ready and "
          + "Paused.")
  public DelayedTaskQueueStatus getStatus() {
    return super.getStatus();
  }
}
