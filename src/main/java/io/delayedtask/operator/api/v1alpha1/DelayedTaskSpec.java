package io.delayedtask.operator.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import com.fasterxml.jackson.databind.annotation.JsonDeserialize;
import io.fabric8.crd.generator.annotation.SchemaFrom;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;
import io.fabric8.kubernetes.api.model.batch.v1.JobTemplateSpec;
import java.util.List;
import java.util.Map;

/** What the user asks for. Exactly one of runAt and delay; everything else is optional. */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonIgnoreProperties(ignoreUnknown = true) // a newer CRD's fields: handled by the ones we know
@JsonDeserialize(
    using = DelayedTaskSpecDeserializer.class) // a field of the wrong type: Invalid, not a crash
@ValidationRule(
    value = "has(self.runAt) != has(self.delay)",
    message =
        "set exactly one of spec.runAt (an RFC 3339 time) and spec.delay (a duration such as 10m)")
@ValidationRule(
    value =
        "!has(self.runAt) || has(self.timeZone) || self.runAt.matches(r'"
            + DelayedTaskSpec.OFFSET_AT_END
            + "')",
    message =
        "spec.runAt has no offset; add Z or an offset such as +01:00, or set spec.timeZone to an IANA "
            + "time zone such as Europe/Berlin")
@ValidationRule(
    value = "!has(self.jobTemplate) || !has(self.sink)",
    message = "set at most one of spec.jobTemplate (run a Job) and spec.sink (call a service)")
@ValidationRule(
    value = "!has(self.delivery) || has(self.sink)",
    message = "spec.delivery applies only to spec.sink; add spec.sink or remove spec.delivery")
@ValidationRule(
    value = "!has(self.data) || has(self.sink)",
    message =
        "spec.data is the body of a sink's request and applies only to spec.sink; add spec.sink or remove "
            + "spec.data (spec.payload reaches a Job as annotations)")
@ValidationRule(
    value = "!has(self.contentType) || (has(self.sink) && has(self.data))",
    message =
        "spec.contentType is the Content-Type of spec.data and applies only with spec.sink and spec.data; "
            + "add them or remove spec.contentType")
@ValidationRule(
    value = "!has(self.ceOverrides) || has(self.sink)",
    message =
        "spec.ceOverrides adds CloudEvents attributes to a sink's request and applies only to spec.sink; add "
            + "spec.sink or remove spec.ceOverrides")
public class DelayedTaskSpec {
  /**
   * Longest runAt or delay accepted: far above any real value, and it keeps the CEL cost of the
   * rules small.
   */
  public static final int MAX_LENGTH = 64;

  /** The longest spec.data. */
  public static final int DATA_MAX_LENGTH = 65_536;

  /** The longest spec.contentType. */
  public static final int CONTENT_TYPE_MAX_LENGTH = 256;

  /** The default spec.contentType. */
  public static final String DEFAULT_CONTENT_TYPE = "application/json";

  /**
   * A media type (RFC 6838 names: type/subtype, then optional parameters), such as text/plain,
   * application/cloudevents+json or text/plain; charset=utf-8.
   */
  public static final String MEDIA_TYPE =
      "^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}"
          + "( *; *[A-Za-z0-9!#$&^_.+-]+=([A-Za-z0-9!#$&^_.+-]+|\"[^\"]*\"))*$";

  /** The longest IANA name today has 32 characters. */
  public static final int TIME_ZONE_MAX_LENGTH = 64;

  /**
   * The largest startingDeadlineSeconds and ttlSecondsAfterFinished: 10 years, far beyond any real
   * use.
   */
  public static final long MAX_SECONDS = 315_360_000L;

  /** At most this many payload keys. */
  public static final int PAYLOAD_MAX_KEYS = 64;

  /** Each payload value is at most this many characters. */
  public static final int PAYLOAD_MAX_VALUE_LENGTH = 4096;

  /**
   * A payload key: it becomes the annotation delayedtask.io/payload.&lt;key&gt;, whose name part
   * (at most 63 characters, letters, digits, '-', '_', '.', starting and ending alphanumeric)
   * already holds "payload.", so a key has at most 55 characters.
   */
  public static final String PAYLOAD_KEY_SHAPE = "^[A-Za-z0-9]([-A-Za-z0-9_.]{0,53}[A-Za-z0-9])?$";

  /**
   * The largest spec.jobTemplate, in bytes of its JSON: a pod template with a long inline script
   * and many environment variables stays far below; the operator keeps every task in memory, so a
   * task that is larger is not kept as written (task/spec/SpecValidator and sink/SinkSpecRules,
   * docs/reference.md).
   */
  public static final int JOB_TEMPLATE_MAX_BYTES = 128 * 1024;

  /**
   * The shape of an RFC 3339 time, the offset optional (it may be left out only with timeZone,
   * which the rule on spec checks), at most nine fraction digits as the operator reads them; the
   * operator parses it again and reports what is wrong.
   */
  static final String RFC3339 =
      "^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]{1,9})?([Zz]|[+-][0-9]{2}:[0-9]{2})?$";

  /** A runAt that ends in an offset (the rest of its shape is checked by the rule on runAt). */
  static final String OFFSET_AT_END = "([Zz]|[+-][0-9]{2}:[0-9]{2})$";

  /**
   * The shape of an IANA time zone name (Europe/Berlin, America/Argentina/Buenos_Aires, Etc/GMT+5,
   * UTC); whether the zone exists only the operator can tell, and it reports an unknown one.
   */
  public static final String TIME_ZONE_SHAPE = "^[A-Za-z][A-Za-z0-9_+-]*(/[A-Za-z0-9_+-]+)*$";

  /** A DNS label: a queue's name. */
  public static final String DNS_LABEL = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$";

  /** Go-style (1h30m, 1.5h, 500ms) or ISO-8601 time-based (PT10M) durations, never negative. */
  static final String DURATION =
      "^(([0-9]+(\\.[0-9]+)?(ms|s|m|h))+|[Pp]([0-9]+[Dd])?([Tt]([0-9]+[Hh])?([0-9]+[Mm])?([0-9]+(\\.[0-9]+)?[Ss])?)?)$";

  @Size(max = MAX_LENGTH)
  @ValidationRule(
      value = "self.matches(r'" + RFC3339 + "')",
      message =
          "spec.runAt must be an RFC 3339 time such as 2026-12-03T07:00:00Z or 2026-12-03T08:00:00.5+01:00 "
              + "(with spec.timeZone, the offset may be left out: 2026-12-03T07:00:00)")
  @JsonPropertyDescription(
      "Absolute due time, RFC 3339 (2026-12-03T07:00:00Z; offsets and fractions allowed). "
          + "With timeZone, the offset may be left out (2026-12-03T07:00:00): wall-clock time in that zone. "
          + "Exactly one of runAt and delay is set.")
  private String runAt;

  @Size(max = TIME_ZONE_MAX_LENGTH)
  @ValidationRule(
      value = "self.matches(r'" + TIME_ZONE_SHAPE + "')",
      message =
          "spec.timeZone must be an IANA time zone name such as Europe/Berlin, America/New_York or Etc/UTC")
  @JsonPropertyDescription(
      "An IANA time zone name (Europe/Berlin, America/New_York, Etc/UTC). With it, a runAt "
          + "without offset is wall-clock time in that zone: a time skipped when clocks jump forward moves forward by "
          + "the jump, a time that happens twice when clocks go back is the earlier one. A runAt with an offset keeps "
          + "its instant; delay ignores it. An unknown zone makes the task Invalid.")
  private String timeZone;

  @Size(max = MAX_LENGTH)
  @ValidationRule(
      value = "self.matches(r'" + DURATION + "')",
      message =
          "spec.delay must be a non-negative duration such as 500ms, 45s, 10m, 1h30m, 1.5h or PT10M")
  @JsonPropertyDescription(
      "Due time relative to metadata.creationTimestamp: a duration such as 500ms, 45s, 10m, "
          + "1h30m, 1.5h, or ISO-8601 PT10M. Exactly one of runAt and delay is set.")
  private String delay;

  @Min(0)
  @Max(MAX_SECONDS)
  @JsonPropertyDescription(
      "If the task cannot fire within this many seconds after its due time, it does not fire "
          + "and its phase becomes Missed. 0 to 315360000 (10 years). Unset: no deadline.")
  private Long startingDeadlineSeconds;

  @Default("false")
  @JsonPropertyDescription(
      "A suspended task does not fire. Un-suspending schedules it again; if it is already "
          + "overdue it fires at once unless its starting deadline has passed.")
  private Boolean suspend;

  @Min(0)
  @Max(MAX_SECONDS)
  @JsonPropertyDescription(
      "The DelayedTask is deleted this many seconds after it reaches a finished phase "
          + "(Fired, Succeeded, Failed, Missed); its Job goes with it. 0 to 315360000 (10 years). Unset: kept.")
  private Long ttlSecondsAfterFinished;

  // The Job's schema from the fabric8 model, without descriptions, every object keeping unknown
  // fields (JobTemplateSchema): the CRD is then 75 KiB as JSON, well under the 256 KiB that a
  // client-side apply's last-applied annotation may hold (with a pointer to kubectl explain
  // job.spec
  // on every field it was 212 KiB; Kubernetes' own descriptions would not fit at all).
  @SchemaFrom(type = JobTemplateSchema.class)
  @JsonPropertyDescription(
      "A batch/v1 JobTemplateSpec (metadata, spec). Present: firing creates a Job from it "
          + "in the task's namespace. Absent: firing only records it in the status. At most 131072 bytes as JSON.")
  private JobTemplateSpec jobTemplate;

  @Size(max = PAYLOAD_MAX_KEYS)
  @ValidationRule(
      value = "self.all(k, size(self[k]) <= " + PAYLOAD_MAX_VALUE_LENGTH + ")",
      message =
          "spec.payload values are at most 4096 characters; shorten the value, or pass a reference "
              + "(a ConfigMap's name, a URL) instead of the data")
  @ValidationRule(
      value = "self.all(k, k.matches(r'" + PAYLOAD_KEY_SHAPE + "'))",
      message =
          "spec.payload keys become the annotation delayedtask.io/payload.<key>: use at most 55 letters, "
              + "digits, '-', '_' or '.', starting and ending with a letter or digit")
  @JsonPropertyDescription(
      "Opaque data for whoever reacts to the task; copied onto the created Job as "
          + "annotations delayedtask.io/payload.<key>. At most 64 keys (each at most 55 letters, digits, '-', '_' "
          + "or '.'), each value at most 4096 characters.")
  private Map<String, String> payload;

  @Size(max = DATA_MAX_LENGTH)
  @JsonPropertyDescription(
      "Only with sink: the CloudEvent's data, sent verbatim as the request body instead of the "
          + "payload (Knative PingSource's data), with Content-Type: contentType. At most 65,536 characters. Under a "
          + "JSON content type (application/json, */*+json) it must be valid JSON, or the task is Invalid.")
  private String data;

  @Size(max = CONTENT_TYPE_MAX_LENGTH)
  @ValidationRule(
      value = "self.matches(r'" + MEDIA_TYPE + "')",
      message =
          "spec.contentType must be a media type such as application/json, text/plain or application/xml")
  @JsonPropertyDescription(
      "Only with sink and data: the media type of data, sent as Content-Type (text/plain, "
          + "application/xml, application/cloudevents+json). Default application/json.")
  private String contentType;

  @JsonPropertyDescription(
      "Only with sink: CloudEvents extension attributes added to every attempt as ce-<name> "
          + "headers (Knative's ceOverrides), so a Knative Trigger or a receiver can route on them.")
  private CeOverrides ceOverrides;

  @JsonPropertyDescription(
      "Present: firing sends a CloudEvent over HTTP (POST, binary mode, data as the body, "
          + "or else the payload as a JSON object) to this Service, Knative Addressable or URL, retried as spec.delivery says. At most one of jobTemplate and sink.")
  private Destination sink;

  @JsonPropertyDescription("How a sink delivery is retried; only with sink.")
  private DeliverySpec delivery;

  @Size(max = 63)
  @ValidationRule(
      value = "self.matches(r'" + DNS_LABEL + "')",
      message =
          "spec.queue must name a DelayedTaskQueue of the task's namespace: a DNS label (lower-case letters, "
              + "digits and '-', starting and ending with a letter or digit, at most 63 characters)")
  @JsonPropertyDescription(
      "The DelayedTaskQueue of the task's namespace whose rate, concurrency and pause apply to "
          + "this task (kubectl explain dtq). A queue that does not exist holds the task (Queued, QueueMissing) until it "
          + "is created. Unset: no queue.")
  private String queue;

  /** Fields present but of the wrong type, one sentence each; never serialized. */
  @JsonIgnore private List<String> unreadableFields = List.of();

  public String getRunAt() {
    return runAt;
  }

  public void setRunAt(String runAt) {
    this.runAt = runAt;
  }

  public String getTimeZone() {
    return timeZone;
  }

  public void setTimeZone(String timeZone) {
    this.timeZone = timeZone;
  }

  public String getDelay() {
    return delay;
  }

  public void setDelay(String delay) {
    this.delay = delay;
  }

  public Long getStartingDeadlineSeconds() {
    return startingDeadlineSeconds;
  }

  public void setStartingDeadlineSeconds(Long startingDeadlineSeconds) {
    this.startingDeadlineSeconds = startingDeadlineSeconds;
  }

  public Boolean getSuspend() {
    return suspend;
  }

  public void setSuspend(Boolean suspend) {
    this.suspend = suspend;
  }

  /** Null-safe view of {@link #getSuspend()}: absent means not suspended. */
  @JsonIgnore
  public boolean isSuspended() {
    return Boolean.TRUE.equals(suspend);
  }

  public Long getTtlSecondsAfterFinished() {
    return ttlSecondsAfterFinished;
  }

  public void setTtlSecondsAfterFinished(Long ttlSecondsAfterFinished) {
    this.ttlSecondsAfterFinished = ttlSecondsAfterFinished;
  }

  public JobTemplateSpec getJobTemplate() {
    return jobTemplate;
  }

  public void setJobTemplate(JobTemplateSpec jobTemplate) {
    this.jobTemplate = jobTemplate;
  }

  public Map<String, String> getPayload() {
    return payload;
  }

  public void setPayload(Map<String, String> payload) {
    this.payload = payload;
  }

  public String getData() {
    return data;
  }

  public void setData(String data) {
    this.data = data;
  }

  public String getContentType() {
    return contentType;
  }

  public void setContentType(String contentType) {
    this.contentType = contentType;
  }

  public CeOverrides getCeOverrides() {
    return ceOverrides;
  }

  public void setCeOverrides(CeOverrides ceOverrides) {
    this.ceOverrides = ceOverrides;
  }

  public Destination getSink() {
    return sink;
  }

  public void setSink(Destination sink) {
    this.sink = sink;
  }

  public DeliverySpec getDelivery() {
    return delivery;
  }

  public void setDelivery(DeliverySpec delivery) {
    this.delivery = delivery;
  }

  public String getQueue() {
    return queue;
  }

  public void setQueue(String queue) {
    this.queue = queue;
  }

  /**
   * The fields that were present but could not be read (wrong type), each named with the fix;
   * usually empty.
   */
  public List<String> unreadableFields() {
    return unreadableFields;
  }

  void markUnreadable(List<String> problems) {
    this.unreadableFields = List.copyOf(problems);
  }

  /**
   * For copies made by serializing and deserializing (JOSDK hands the reconciler one): the
   * unreadable fields are not serialized, so without this a copy of an Invalid task would look
   * valid.
   */
  public void keepUnreadableOf(DelayedTaskSpec original) {
    this.unreadableFields = original.unreadableFields;
  }
}
