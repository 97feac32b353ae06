package io.delayedtask.operator.task;

import io.delayedtask.operator.api.v1alpha1.CeOverrides;
import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.DelayedTaskSpec;
import io.delayedtask.operator.api.v1alpha1.DelayedTaskStatus;
import io.delayedtask.operator.api.v1alpha1.DeliverySpec;
import io.delayedtask.operator.api.v1alpha1.Destination;
import io.delayedtask.operator.api.v1alpha1.Phase;
import io.delayedtask.operator.api.v1alpha1.ServiceReference;
import io.delayedtask.operator.api.v1alpha1.Signing;
import io.delayedtask.operator.config.AllowedUris;
import io.delayedtask.operator.config.SinkConfig;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.batch.v1.JobTemplateSpec;
import java.io.ByteArrayInputStream;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.security.cert.Certificate;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoUnit;
import java.util.Collection;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;

/**
 * Checks a DelayedTask's spec again (the CRD's CEL rules are not enforced by every API server) and
 * computes its due time. Every refusal names the field and the fix.
 */
public final class SpecValidator {
  /** The longest delivery.timeout accepted. */
  public static final Duration MAX_DELIVERY_TIMEOUT = Duration.ofMinutes(5);
  /** The shortest delivery.backoffDelay. */
  public static final Duration MIN_BACKOFF_DELAY = Duration.ofMillis(100);

  /** RFC 3339 date-time: seconds required, fraction and offset allowed, 'T' and 'Z' in either case. */
  private static final Pattern RFC3339 = Pattern.compile(
      "[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]{1,9})?([Zz]|[+-][0-9]{2}:[0-9]{2})");
  /** The same without the offset: wall-clock time, allowed with spec.timeZone. */
  private static final Pattern LOCAL_DATE_TIME = Pattern.compile(
      "[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]{1,9})?");
  /** RFC 3339 times have four-digit years; later due times could not be written back in status. */
  static final Instant LATEST_DUE = Instant.parse("9999-12-31T23:59:59.999Z");
  /** The name part of an annotation key is at most 63 characters; "payload." takes 8 of them. */
  private static final Pattern PAYLOAD_KEY = Pattern.compile("[A-Za-z0-9]([-A-Za-z0-9_.]{0,53}[A-Za-z0-9])?");

  /** A Service's name: an RFC 1123 DNS label. */
  private static final Pattern DNS_LABEL = Pattern.compile("[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?");
  private static final Pattern REF_API_VERSION = Pattern.compile(ServiceReference.API_VERSION);
  private static final Pattern REF_KIND = Pattern.compile(ServiceReference.KIND);
  private static final Pattern SIGNING_KEY = Pattern.compile(Signing.KEY);
  private static final Pattern MEDIA_TYPE = Pattern.compile(DelayedTaskSpec.MEDIA_TYPE);
  private static final Pattern EXTENSION_NAME = Pattern.compile(CeOverrides.NAME_SHAPE);

  private static final String RUN_AT_EXAMPLE = "an RFC 3339 time such as 2026-12-03T07:00:00Z";
  private static final String TIME_ZONE_EXAMPLE = "an IANA time zone such as Europe/Berlin, America/New_York or Etc/UTC";
  private static final String DELAY_EXAMPLE = "a duration such as 500ms, 45s, 10m, 1h30m, 1.5h or PT10M";

  /** The JDK's region ids, read once: {@link ZoneId#getAvailableZoneIds()} builds a new set per call. */
  private static final Set<String> ZONE_IDS = Set.copyOf(ZoneId.getAvailableZoneIds());

  private final SinkConfig sinkConfig;
  private final RefKinds refKinds;

  /**
   * What the spec of each task (by uid) says, for the generation it was computed at: the reconcile,
   * the resync and the leader's claims all ask, and a spec changes only with its generation
   * (creationTimestamp, which spec.delay counts from, never does). {@link #retainOnly} drops tasks
   * that are gone.
   */
  private final Map<String, SpecVerdict> verdicts = new ConcurrentHashMap<>();

  private record SpecVerdict(long generation, Validation validation) {}

  /** A validator for an operator without allowed sink URIs (the default). */
  public SpecValidator() {
    this(SinkConfig.defaults());
  }

  /** {@code sinkConfig}: which absolute sink URIs are allowed; every Addressable kind passes. */
  public SpecValidator(SinkConfig sinkConfig) {
    this(sinkConfig, RefKinds.ANY);
  }

  /** {@code refKinds}: which kinds a sink.ref may name besides a v1 Service. */
  public SpecValidator(SinkConfig sinkConfig, RefKinds refKinds) {
    this.sinkConfig = sinkConfig;
    this.refKinds = refKinds;
  }

  /**
   * The task's due time, or why it has none. While {@code metadata.generation} equals {@code
   * status.observedGeneration} the recorded {@code status.dueTime} stands: an operator of another
   * version (another time-zone database, a parser fix) never moves the due time of a task whose spec
   * did not change, so it never fires a finished task again under a new due time.
   */
  public Validation validate(DelayedTask task) {
    Validation computed = specOnce(task);
    if (computed instanceof Validation.Valid) {
      Instant recorded = recordedDue(task);
      if (recorded != null) {
        return new Validation.Valid(recorded);
      }
    }
    return computed;
  }

  /** Forgets the tasks whose uid is not in {@code liveUids} (the resync passes every task it saw). */
  public void retainOnly(Collection<String> liveUids) {
    verdicts.keySet().retainAll(liveUids instanceof Set<?> ? liveUids : Set.copyOf(liveUids));
  }

  /** How many tasks' verdicts are kept (for tests). */
  int remembered() {
    return verdicts.size();
  }

  private Validation specOnce(DelayedTask task) {
    ObjectMeta metadata = task.getMetadata();
    if (metadata == null || metadata.getUid() == null || metadata.getGeneration() == null) {
      return validateSpec(task);
    }
    long generation = metadata.getGeneration();
    SpecVerdict known = verdicts.get(metadata.getUid());
    if (known != null && known.generation() == generation) {
      return known.validation();
    }
    Validation validation = validateSpec(task);
    if (!CachedObjects.isTrimmed(task) && !refKindUndecided(task)) {
      // A copy cached without its large fields is checked again once read whole; a ref's kind not
      // known yet is asked again.
      verdicts.put(metadata.getUid(), new SpecVerdict(generation, validation));
    }
    return validation;
  }

  private static Instant recordedDue(DelayedTask task) {
    DelayedTaskStatus status = task.getStatus();
    Long generation = task.getMetadata() == null ? null : task.getMetadata().getGeneration();
    if (status == null || generation == null || !generation.equals(status.getObservedGeneration())
        || status.getPhase() == Phase.Invalid) {
      return null;
    }
    return Times.parseOrNull(status.getDueTime());
  }

  private Validation validateSpec(DelayedTask task) {
    DelayedTaskSpec spec = task.getSpec();
    if (spec == null) {
      return invalid("spec is missing; set spec.runAt (" + RUN_AT_EXAMPLE + ") or spec.delay (" + DELAY_EXAMPLE + ")");
    }
    if (!spec.unreadableFields().isEmpty()) {
      // Read leniently (api.v1alpha1.LenientDeserializer): a field of the wrong type is named here.
      return invalid(String.join("; ", spec.unreadableFields()) + "; fix the field and apply the task again");
    }
    boolean hasRunAt = spec.getRunAt() != null;
    boolean hasDelay = spec.getDelay() != null;
    if (hasRunAt && hasDelay) {
      return invalid("spec.runAt and spec.delay are both set; keep exactly one of them");
    }
    if (!hasRunAt && !hasDelay) {
      return invalid("neither spec.runAt nor spec.delay is set; set exactly one: spec.runAt (" + RUN_AT_EXAMPLE
          + ") or spec.delay (" + DELAY_EXAMPLE + ")");
    }
    String when = hasRunAt ? spec.getRunAt() : spec.getDelay();
    if (when.length() > DelayedTaskSpec.MAX_LENGTH) {
      // The CRD's maxLength, checked again: spaces around a time or a duration are read, so a long
      // value could still mean something here and be refused by an API server that checks the schema.
      return invalid((hasRunAt ? "spec.runAt" : "spec.delay") + " has " + when.length() + " characters; at most "
          + DelayedTaskSpec.MAX_LENGTH + ": use " + (hasRunAt ? RUN_AT_EXAMPLE : DELAY_EXAMPLE));
    }
    if (outOfRange(spec.getStartingDeadlineSeconds())) {
      return invalid("spec.startingDeadlineSeconds is " + spec.getStartingDeadlineSeconds()
          + "; use a number of seconds from 0 to " + DelayedTaskSpec.MAX_SECONDS + " (10 years), or remove it for "
          + "no deadline");
    }
    if (outOfRange(spec.getTtlSecondsAfterFinished())) {
      return invalid("spec.ttlSecondsAfterFinished is " + spec.getTtlSecondsAfterFinished()
          + "; use a number of seconds from 0 to " + DelayedTaskSpec.MAX_SECONDS + " (10 years), or remove it to "
          + "keep the task");
    }
    ZoneId zone = null;
    if (spec.getTimeZone() != null) {
      zone = knownZone(spec.getTimeZone());
      if (zone == null) {
        return invalid("spec.timeZone '" + spec.getTimeZone() + "' is not a known IANA time zone; use "
            + TIME_ZONE_EXAMPLE + ", or remove it and give spec.runAt an offset such as +01:00");
      }
    }
    Validation template = checkJobTemplate(task, spec.getJobTemplate());
    if (template != null) {
      return template;
    }
    Validation payload = checkPayload(spec.getPayload());
    if (payload != null) {
      return payload;
    }
    Validation delivery = checkDelivery(spec, task.getMetadata() == null ? null : task.getMetadata().getNamespace());
    if (delivery != null) {
      return delivery;
    }
    Validation event = checkEvent(spec);
    if (event != null) {
      return event;
    }
    return hasRunAt ? dueFromRunAt(spec.getRunAt(), zone) : dueFromDelay(task, spec.getDelay());
  }

  /**
   * The zone of an IANA name, or null when there is none: only region ids, so neither an offset
   * (+01:00) nor a prefixed one (UTC+1), which ZoneId.of would take, is accepted; the CRD's rule on
   * spec.timeZone lets every region id through (GeneratedCrdTest).
   */
  private static ZoneId knownZone(String name) {
    return ZONE_IDS.contains(name) ? ZoneId.of(name) : null;
  }

  private static Validation dueFromRunAt(String runAt, ZoneId zone) {
    String value = runAt.trim();
    if (zone != null && LOCAL_DATE_TIME.matcher(value).matches()) {
      return dueFromWallClock(runAt, value, zone);
    }
    if (!RFC3339.matcher(value).matches()) {
      String hint = value.matches(".*[Tt ][0-9]{2}:[0-9]{2}(:[0-9]{2})?(\\.[0-9]+)?")
          ? "it has no time zone; add Z or an offset such as +01:00, or set spec.timeZone to " + TIME_ZONE_EXAMPLE
          : "use " + RUN_AT_EXAMPLE + " (offsets such as +01:00 and fractions such as .5 are allowed)";
      return invalid("spec.runAt '" + runAt + "' is not an RFC 3339 time: " + hint);
    }
    Instant due;
    try {
      due = OffsetDateTime.parse(value.toUpperCase(Locale.ROOT)).toInstant();
    } catch (DateTimeParseException e) {
      return invalid("spec.runAt '" + runAt + "' is not a real date and time (check the month, day, hour, "
          + "minute, second and offset); use " + RUN_AT_EXAMPLE);
    }
    return within(due.truncatedTo(ChronoUnit.MILLIS), "spec.runAt '" + runAt + "'");
  }

  /**
   * Wall-clock time in the zone. ofLocal with no preferred offset resolves both DST changes as the
   * contract says: a time in the gap (clocks jump forward) moves forward by the gap's length, one in
   * the overlap (clocks go back) takes the earlier offset, i.e. the earlier instant.
   */
  private static Validation dueFromWallClock(String runAt, String value, ZoneId zone) {
    LocalDateTime local;
    try {
      local = LocalDateTime.parse(value.toUpperCase(Locale.ROOT));
    } catch (DateTimeParseException e) {
      return invalid("spec.runAt '" + runAt + "' is not a real date and time (check the month, day, hour, "
          + "minute and second); use a wall-clock time such as 2026-12-03T07:00:00");
    }
    Instant due;
    try {
      due = ZonedDateTime.ofLocal(local, zone, null).toInstant();
    } catch (java.time.DateTimeException e) {
      return invalid("spec.runAt '" + runAt + "' in " + zone + " is out of range; use a time before the year 10000");
    }
    return within(due.truncatedTo(ChronoUnit.MILLIS), "spec.runAt '" + runAt + "' in " + zone);
  }

  private static Validation dueFromDelay(DelayedTask task, String delay) {
    Duration duration;
    try {
      duration = Durations.parse(delay);
    } catch (Durations.BadDuration e) {
      return invalid("spec.delay '" + delay + "' " + e.getMessage() + "; use a non-negative " + DELAY_EXAMPLE);
    }
    Instant created = creationTimestamp(task.getMetadata());
    if (created == null) {
      return invalid("metadata.creationTimestamp is missing or unreadable, so spec.delay has nothing to count "
          + "from; use spec.runAt instead");
    }
    Instant due;
    try {
      due = created.plus(duration);
    } catch (ArithmeticException | java.time.DateTimeException e) {
      return invalid("spec.delay '" + delay + "' is too long; the due time must be before the year 10000");
    }
    return within(due.truncatedTo(ChronoUnit.MILLIS), "spec.delay '" + delay + "'");
  }

  private static Validation within(Instant due, String what) {
    if (due.isAfter(LATEST_DUE)) {
      return invalid(what + " is too far in the future; the due time must be before the year 10000");
    }
    if (due.isBefore(Instant.EPOCH)) {
      return invalid(what + " is before 1970; use a later time (a past time fires at once)");
    }
    return new Validation.Valid(due);
  }

  private static Validation checkJobTemplate(DelayedTask task, JobTemplateSpec template) {
    if (template == null) {
      return null;
    }
    ObjectMeta metadata = template.getMetadata();
    String taskNamespace = task.getMetadata().getNamespace();
    if (metadata != null && metadata.getNamespace() != null && !metadata.getNamespace().isEmpty()
        && !metadata.getNamespace().equals(taskNamespace)) {
      return invalid("spec.jobTemplate.metadata.namespace is '" + metadata.getNamespace()
          + "', but the Job is always created in the task's namespace '" + taskNamespace
          + "'; remove it or set it to '" + taskNamespace + "'");
    }
    if (template.getSpec() == null || template.getSpec().getTemplate() == null) {
      return invalid("spec.jobTemplate has no spec.template (the pod to run); add spec.jobTemplate.spec.template, "
          + "or remove spec.jobTemplate to only record the firing in the status");
    }
    return null;
  }

  private Validation checkDelivery(DelayedTaskSpec spec, String namespace) {
    if (spec.getJobTemplate() != null && spec.getSink() != null) {
      return invalid("spec.jobTemplate and spec.sink are both set; keep at most one: a Job to run, or a service to "
          + "call");
    }
    if (spec.getSink() == null) {
      return spec.getDelivery() == null ? null
          : invalid("spec.delivery applies only to spec.sink; add spec.sink or remove spec.delivery");
    }
    Validation sink = checkDestination("spec.sink", spec.getSink(), namespace);
    if (sink != null) {
      return sink;
    }
    DeliverySpec delivery = spec.getDelivery();
    if (delivery == null) {
      return null;
    }
    if (delivery.getRetry() != null && (delivery.getRetry() < 0 || delivery.getRetry() > DeliverySpec.MAX_RETRY)) {
      return invalid("spec.delivery.retry is " + delivery.getRetry() + "; use 0 to " + DeliverySpec.MAX_RETRY);
    }
    if (delivery.getBackoffPolicy() != null && !delivery.getBackoffPolicy().equals("linear")
        && !delivery.getBackoffPolicy().equals("exponential")) {
      return invalid("spec.delivery.backoffPolicy is '" + delivery.getBackoffPolicy() + "'; use linear or exponential");
    }
    Validation backoffDelay = checkDuration("spec.delivery.backoffDelay", delivery.getBackoffDelay(), null);
    if (backoffDelay != null) {
      return backoffDelay;
    }
    if (delivery.getBackoffDelay() != null && shorterThan(delivery.getBackoffDelay(), MIN_BACKOFF_DELAY)) {
      return invalid("spec.delivery.backoffDelay '" + delivery.getBackoffDelay() + "' is shorter than the minimum "
          + DeliverySpec.MIN_BACKOFF_DELAY + "; use a duration such as 100ms, 1s or 30s");
    }
    Validation timeout = checkDuration("spec.delivery.timeout", delivery.getTimeout(), MAX_DELIVERY_TIMEOUT);
    if (timeout != null) {
      return timeout;
    }
    if (delivery.getDeadLetterSink() != null) {
      if (delivery.getDeadLetterSink().getAudience() != null) {
        return invalid("spec.delivery.deadLetterSink takes no audience; remove it");
      }
      return checkDestination("spec.delivery.deadLetterSink", delivery.getDeadLetterSink(), namespace);
    }
    return null;
  }

  /** Whether a sink.ref of {@code task} names a kind whose verdict is not known yet. */
  private boolean refKindUndecided(DelayedTask task) {
    DelayedTaskSpec spec = task.getSpec();
    if (spec == null || task.getMetadata() == null) {
      return false;
    }
    Destination deadLetter = spec.getDelivery() == null ? null : spec.getDelivery().getDeadLetterSink();
    for (Destination destination : new Destination[] {spec.getSink(), deadLetter}) {
      ServiceReference ref = destination == null ? null : destination.getRef();
      if (ref != null && ref.getApiVersion() != null && ref.getKind() != null && !isCoreService(ref)
          && refKinds.verdict(task.getMetadata().getNamespace(), ref.getApiVersion(), ref.getKind())
              instanceof RefKinds.Verdict.NotKnownYet) {
        return true;
      }
    }
    return false;
  }

  private static boolean isCoreService(ServiceReference ref) {
    return "v1".equals(ref.getApiVersion()) && "Service".equals(ref.getKind());
  }

  private Validation checkDestination(String field, Destination destination, String namespace) {
    ServiceReference ref = destination.getRef();
    String uri = destination.getUri();
    if (ref == null && uri == null) {
      return invalid(field + " names no destination; set " + field + ".ref (a Service in this namespace) or "
          + field + ".uri (an absolute http:// or https:// URL)");
    }
    if (destination.getSigning() != null) {
      String key = destination.getSigning().getKey();
      if (key == null || key.isEmpty() || key.length() > 253 || !SIGNING_KEY.matcher(key).matches()) {
        return invalid(field + ".signing.key " + (key == null ? "is missing" : "'" + key + "' is not a Secret key")
            + "; name a key of the signing Secret (letters, digits, '-', '_' and '.', at most 253), or remove "
            + field + ".signing");
      }
    }
    if (destination.getCaCerts() != null) {
      String problem = pemProblem(destination.getCaCerts());
      if (problem != null) {
        return invalid(field + ".caCerts " + problem + "; give one or more PEM certificates, each from "
            + "-----BEGIN CERTIFICATE----- to -----END CERTIFICATE-----, or remove " + field + ".caCerts");
      }
    }
    if (ref != null) {
      if (ref.getApiVersion() == null || ref.getKind() == null || !REF_API_VERSION.matcher(ref.getApiVersion()).matches()
          || !REF_KIND.matcher(ref.getKind()).matches()
          || ("v1".equals(ref.getApiVersion()) && !"Service".equals(ref.getKind()))) {
        return invalid(field + ".ref is " + ref.getApiVersion() + " " + ref.getKind() + "; it must name a Service "
            + "(apiVersion: v1, kind: Service) or a Knative Addressable such as apiVersion: serving.knative.dev/v1, "
            + "kind: Service or apiVersion: eventing.knative.dev/v1, kind: Broker");
      }
      if (ref.getName() == null || ref.getName().isEmpty()) {
        return invalid(field + ".ref.name is missing; name a Service in the task's namespace");
      }
      if (!DNS_LABEL.matcher(ref.getName()).matches()) {
        return invalid(field + ".ref.name '" + ref.getName() + "' is not a DNS label; name a Service in the task's "
            + "namespace: lower-case letters, digits and '-', starting and ending with a letter or digit, at most 63 "
            + "characters");
      }
      if (uri != null && !uri.startsWith("/")) {
        return invalid(field + ".uri '" + uri + "' must be a path such as /orders/cancel when " + field
            + ".ref is set");
      }
      if (!isCoreService(ref) && refKinds.verdict(namespace, ref.getApiVersion(), ref.getKind())
          instanceof RefKinds.Verdict.Refused refused) {
        return invalid(field + ".ref is " + ref.getApiVersion() + " " + ref.getKind() + ": " + refused.why());
      }
      return null;
    }
    URI parsed;
    try {
      parsed = new URI(uri);
    } catch (URISyntaxException e) {
      return invalid(field + ".uri '" + uri + "' is not a URL (" + e.getReason() + "); use an absolute URL such as "
          + "https://hooks.example.com/due");
    }
    if (!parsed.isAbsolute() || parsed.getHost() == null
        || !("http".equals(parsed.getScheme()) || "https".equals(parsed.getScheme()))) {
      return invalid(field + ".uri '" + uri + "' must be an absolute http:// or https:// URL, or a path with "
          + field + ".ref naming a Service");
    }
    Optional<String> never = AllowedUris.problem(uri);
    if (never.isPresent()) {
      return invalid(field + ".uri '" + uri + "' is not allowed: " + never.get());
    }
    Optional<String> ambiguous = sinkConfig.allowlist().whyRefused(uri, namespace);
    if (ambiguous.isPresent()) {
      return invalid(field + ".uri '" + uri + "' is not allowed: " + ambiguous.get());
    }
    if (!sinkConfig.allows(uri, namespace)) {
      return invalid(field + ".uri '" + uri + "' is not allowed: no entry of the operator's " + SinkConfig.ALLOWED_URIS
          + " (" + (sinkConfig.allowedUris().isEmpty() ? "none set" : String.join(", ", sinkConfig.allowedUris()))
          + ") allows its scheme, host, port and path; name a Service in this namespace with " + field
          + ".ref instead, or ask the operator's administrators to allow the URL");
    }
    if (destination.getAudience() != null && "http".equals(parsed.getScheme())) {
      return invalid(field + ".audience is set and " + field + ".uri '" + uri + "' is plain http: a token is sent only "
          + "over https or to a Service of this namespace; use an https:// URL, name a Service with " + field
          + ".ref, or remove " + field + ".audience");
    }
    return null;
  }

  /** spec.data, spec.contentType and spec.ceOverrides: what the CRD's rules say, and whether JSON data is JSON. */
  private static Validation checkEvent(DelayedTaskSpec spec) {
    String data = spec.getData();
    String contentType = spec.getContentType();
    CeOverrides overrides = spec.getCeOverrides();
    if (spec.getSink() == null) {
      if (data != null) {
        return invalid("spec.data is the body of a sink's request and applies only to spec.sink; add spec.sink or "
            + "remove spec.data (spec.payload reaches a Job as annotations)");
      }
      if (overrides != null) {
        return invalid("spec.ceOverrides adds CloudEvents attributes to a sink's request and applies only to "
            + "spec.sink; add spec.sink or remove spec.ceOverrides");
      }
    }
    if (contentType != null && (spec.getSink() == null || data == null)) {
      return invalid("spec.contentType is the Content-Type of spec.data and applies only with spec.sink and "
          + "spec.data; add them or remove spec.contentType");
    }
    if (data != null && data.length() > DelayedTaskSpec.DATA_MAX_LENGTH) {
      return invalid("spec.data has " + data.length() + " characters; at most " + DelayedTaskSpec.DATA_MAX_LENGTH
          + " are sent");
    }
    if (contentType != null && (contentType.length() > DelayedTaskSpec.CONTENT_TYPE_MAX_LENGTH
        || !MEDIA_TYPE.matcher(contentType).matches())) {
      return invalid("spec.contentType '" + contentType + "' must be a media type such as application/json, "
          + "text/plain or application/xml");
    }
    if (data != null && EventBodies.isJson(EventBodies.contentType(contentType)) && !EventBodies.isJsonText(data)) {
      return invalid("spec.data is not valid JSON, and spec.contentType is "
          + EventBodies.contentType(contentType) + (contentType == null ? " (the default)" : "")
          + "; fix spec.data, or set spec.contentType to the data's media type, such as text/plain");
    }
    if (overrides != null && overrides.getExtensions() != null) {
      Map<String, String> extensions = overrides.getExtensions();
      if (extensions.size() > CeOverrides.MAX_EXTENSIONS) {
        return invalid("spec.ceOverrides.extensions has " + extensions.size() + " entries; at most "
            + CeOverrides.MAX_EXTENSIONS);
      }
      for (Map.Entry<String, String> extension : new java.util.TreeMap<>(extensions).entrySet()) {
        String name = extension.getKey();
        String field = "spec.ceOverrides.extensions." + name;
        if (!EXTENSION_NAME.matcher(name).matches()) {
          return invalid("spec.ceOverrides.extensions name '" + name + "' must be 1 to 20 lowercase letters or "
              + "digits (a CloudEvents extension name), such as team or region");
        }
        if (CeOverrides.CLOUDEVENTS_ATTRIBUTES.contains(name)) {
          return invalid(field + ": " + name + " is a CloudEvents attribute the operator sets; use another name");
        }
        if (name.startsWith(CeOverrides.RESERVED_PREFIX)) {
          return invalid(field + ": names beginning with delayedtask are the operator's own; use another name");
        }
        if (extension.getValue() == null) {
          return invalid(field + " has no value; give it a string or remove it");
        }
        if (extension.getValue().length() > CeOverrides.VALUE_MAX_LENGTH) {
          return invalid(field + " has " + extension.getValue().length() + " characters; a value is at most "
              + CeOverrides.VALUE_MAX_LENGTH);
        }
      }
    }
    return null;
  }

  /** What keeps {@code pem} from being trusted for https (the sender parses it the same way), or null. */
  private static String pemProblem(String pem) {
    try {
      Collection<? extends Certificate> certificates = CertificateFactory.getInstance("X.509")
          .generateCertificates(new ByteArrayInputStream(pem.getBytes(StandardCharsets.US_ASCII)));
      return certificates.isEmpty() ? "holds no PEM certificate" : null;
    } catch (CertificateException e) {
      return "is not valid PEM (" + e.getMessage() + ")";
    }
  }

  private static Validation checkDuration(String field, String value, Duration max) {
    if (value == null) {
      return null;
    }
    Duration duration;
    try {
      duration = Durations.parse(value);
    } catch (Durations.BadDuration e) {
      return invalid(field + " '" + value + "' " + e.getMessage() + "; use " + DELAY_EXAMPLE);
    }
    if (max != null && (duration.isZero() || duration.compareTo(max) > 0)) {
      return invalid(field + " '" + value + "' must be more than 0 and at most 5m");
    }
    return null;
  }

  /** A duration that parses (checked before) and is shorter than {@code min}. */
  private static boolean shorterThan(String value, Duration min) {
    try {
      return Durations.parse(value).compareTo(min) < 0;
    } catch (Durations.BadDuration e) {
      return false;
    }
  }

  private static boolean outOfRange(Long seconds) {
    return seconds != null && (seconds < 0 || seconds > DelayedTaskSpec.MAX_SECONDS);
  }

  private static Validation checkPayload(Map<String, String> payload) {
    if (payload == null) {
      return null;
    }
    if (payload.size() > DelayedTaskSpec.PAYLOAD_MAX_KEYS) {
      return invalid("spec.payload has " + payload.size() + " keys; use at most " + DelayedTaskSpec.PAYLOAD_MAX_KEYS
          + ", or pass a reference (a ConfigMap's name, a URL) instead of the data");
    }
    for (Map.Entry<String, String> entry : payload.entrySet()) {
      String key = entry.getKey();
      if (key == null || !PAYLOAD_KEY.matcher(key).matches()) {
        return invalid("spec.payload key '" + key + "' cannot be used in the annotation delayedtask.io/payload.<key>; "
            + "use at most 55 letters, digits, '-', '_' or '.', starting and ending with a letter or digit");
      }
      if (entry.getValue() != null && entry.getValue().length() > DelayedTaskSpec.PAYLOAD_MAX_VALUE_LENGTH) {
        return invalid("spec.payload." + key + " has " + entry.getValue().length() + " characters; use at most "
            + DelayedTaskSpec.PAYLOAD_MAX_VALUE_LENGTH + ", or pass a reference (a ConfigMap's name, a URL) instead "
            + "of the data");
      }
    }
    return null;
  }

  private static Instant creationTimestamp(ObjectMeta metadata) {
    return metadata == null ? null : Times.parseOrNull(metadata.getCreationTimestamp());
  }

  private static Validation invalid(String message) {
    return new Validation.Invalid(message);
  }
}
