package io.delayedtask.operator.sink;

import io.delayedtask.operator.api.v1alpha1.CeOverrides;
import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.DelayedTaskSpec;
import io.delayedtask.operator.api.v1alpha1.DeliverySpec;
import io.delayedtask.operator.api.v1alpha1.Destination;
import io.delayedtask.operator.api.v1alpha1.ServiceReference;
import io.delayedtask.operator.api.v1alpha1.Signing;
import io.delayedtask.operator.config.AllowedUris;
import io.delayedtask.operator.config.SinkConfig;
import io.delayedtask.operator.task.spec.SpecRules;
import io.delayedtask.operator.task.spec.Validation;
import io.delayedtask.operator.task.time.Durations;
import java.io.ByteArrayInputStream;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.security.cert.Certificate;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.Collection;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * The spec rules of a delivery: {@code spec.sink} and the dead-letter sink (a Service or an
 * Addressable of the task's namespace, or a URL the operator's allowlist admits), {@code
 * spec.delivery}, and the event ({@code spec.data}, {@code spec.contentType}, {@code
 * spec.ceOverrides}). The CRD's CEL rules say the same where CEL can; these are checked again
 * because not every API server enforces them, and for what only the operator knows (the allowlist,
 * the kinds a ref may name). Every refusal names the field and the fix.
 */
public final class SinkSpecRules implements SpecRules {
  /** The longest delivery.timeout accepted. */
  static final Duration MAX_DELIVERY_TIMEOUT = Duration.ofMinutes(5);

  /** The shortest delivery.backoffDelay. */
  static final Duration MIN_BACKOFF_DELAY = Duration.ofMillis(100);

  /** A Service's name: an RFC 1123 DNS label. */
  private static final Pattern DNS_LABEL = Pattern.compile("[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?");

  private static final Pattern REF_API_VERSION = Pattern.compile(ServiceReference.API_VERSION);
  private static final Pattern REF_KIND = Pattern.compile(ServiceReference.KIND);
  private static final Pattern SIGNING_KEY = Pattern.compile(Signing.KEY);
  private static final Pattern MEDIA_TYPE = Pattern.compile(DelayedTaskSpec.MEDIA_TYPE);
  private static final Pattern EXTENSION_NAME = Pattern.compile(CeOverrides.NAME_SHAPE);

  private final SinkConfig sinkConfig;
  private final RefKinds refKinds;

  /**
   * {@code sinkConfig}: which absolute sink URIs are allowed; {@code refKinds}: which kinds a
   * sink.ref may name besides a v1 Service.
   */
  public SinkSpecRules(SinkConfig sinkConfig, RefKinds refKinds) {
    this.sinkConfig = sinkConfig;
    this.refKinds = refKinds;
  }

  /** {@code sinkConfig}: which absolute sink URIs are allowed; every Addressable kind passes. */
  public SinkSpecRules(SinkConfig sinkConfig) {
    this(sinkConfig, RefKinds.ANY);
  }

  /**
   * The rules of an operator without allowed sink URIs (the default), every Addressable kind
   * passing.
   */
  public static SinkSpecRules defaults() {
    return new SinkSpecRules(SinkConfig.defaults());
  }

  @Override
  public Optional<Validation.Invalid> refusal(DelayedTask task) {
    DelayedTaskSpec spec = task.getSpec();
    Validation delivery =
        checkDelivery(spec, task.getMetadata() == null ? null : task.getMetadata().getNamespace());
    if (delivery == null) {
      delivery = checkEvent(spec);
    }
    return Optional.ofNullable((Validation.Invalid) delivery);
  }

  /** Settled unless a sink.ref names a kind whose verdict is not known yet. */
  @Override
  public boolean settled(DelayedTask task) {
    return !refKindUndecided(task);
  }

  private Validation checkDelivery(DelayedTaskSpec spec, String namespace) {
    if (spec.getJobTemplate() != null && spec.getSink() != null) {
      return invalid(
          "spec.jobTemplate and spec.sink are both set; keep at most one: a Job to run, or a service to "
              + "call");
    }
    if (spec.getSink() == null) {
      return spec.getDelivery() == null
          ? null
          : invalid(
              "spec.delivery applies only to spec.sink; add spec.sink or remove spec.delivery");
    }
    Validation sink = checkDestination("spec.sink", spec.getSink(), namespace);
    if (sink != null) {
      return sink;
    }
    DeliverySpec delivery = spec.getDelivery();
    if (delivery == null) {
      return null;
    }
    if (delivery.getRetry() != null
        && (delivery.getRetry() < 0 || delivery.getRetry() > DeliverySpec.MAX_RETRY)) {
      return invalid(
          "spec.delivery.retry is " + delivery.getRetry() + "; use 0 to " + DeliverySpec.MAX_RETRY);
    }
    if (delivery.getBackoffPolicy() != null
        && !delivery.getBackoffPolicy().equals("linear")
        && !delivery.getBackoffPolicy().equals("exponential")) {
      return invalid(
          "spec.delivery.backoffPolicy is '"
              + delivery.getBackoffPolicy()
              + "'; use linear or exponential");
    }
    Validation backoffDelay =
        checkDuration("spec.delivery.backoffDelay", delivery.getBackoffDelay(), null);
    if (backoffDelay != null) {
      return backoffDelay;
    }
    if (delivery.getBackoffDelay() != null
        && shorterThan(delivery.getBackoffDelay(), MIN_BACKOFF_DELAY)) {
      return invalid(
          "spec.delivery.backoffDelay '"
              + delivery.getBackoffDelay()
              + "' is shorter than the minimum "
              + DeliverySpec.MIN_BACKOFF_DELAY
              + "; use a duration such as 100ms, 1s or 30s");
    }
    Validation timeout =
        checkDuration("spec.delivery.timeout", delivery.getTimeout(), MAX_DELIVERY_TIMEOUT);
    if (timeout != null) {
      return timeout;
    }
    if (delivery.getDeadLetterSink() != null) {
      if (delivery.getDeadLetterSink().getAudience() != null) {
        return invalid("spec.delivery.deadLetterSink takes no audience; remove it");
      }
      return checkDestination(
          "spec.delivery.deadLetterSink", delivery.getDeadLetterSink(), namespace);
    }
    return null;
  }

  /** Whether a sink.ref of {@code task} names a kind whose verdict is not known yet. */
  private boolean refKindUndecided(DelayedTask task) {
    DelayedTaskSpec spec = task.getSpec();
    if (spec == null || task.getMetadata() == null) {
      return false;
    }
    Destination deadLetter =
        spec.getDelivery() == null ? null : spec.getDelivery().getDeadLetterSink();
    for (Destination destination : new Destination[] {spec.getSink(), deadLetter}) {
      ServiceReference ref = destination == null ? null : destination.getRef();
      if (ref != null
          && ref.getApiVersion() != null
          && ref.getKind() != null
          && !isCoreService(ref)
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
      return invalid(
          field
              + " names no destination; set "
              + field
              + ".ref (a Service in this namespace) or "
              + field
              + ".uri (an absolute http:// or https:// URL)");
    }
    if (destination.getSigning() != null) {
      String key = destination.getSigning().getKey();
      if (key == null
          || key.isEmpty()
          || key.length() > 253
          || !SIGNING_KEY.matcher(key).matches()) {
        return invalid(
            field
                + ".signing.key "
                + (key == null ? "is missing" : "'" + key + "' is not a Secret key")
                + "; name a key of the signing Secret (letters, digits, '-', '_' and '.', at most 253), or remove "
                + field
                + ".signing");
      }
    }
    if (destination.getCaCerts() != null) {
      String problem = pemProblem(destination.getCaCerts());
      if (problem != null) {
        return invalid(
            field
                + ".caCerts "
                + problem
                + "; give one or more PEM certificates, each from "
                + "-----BEGIN CERTIFICATE----- to -----END CERTIFICATE-----, or remove "
                + field
                + ".caCerts");
      }
    }
    if (ref != null) {
      if (ref.getApiVersion() == null
          || ref.getKind() == null
          || !REF_API_VERSION.matcher(ref.getApiVersion()).matches()
          || !REF_KIND.matcher(ref.getKind()).matches()
          || ("v1".equals(ref.getApiVersion()) && !"Service".equals(ref.getKind()))) {
        return invalid(
            field
                + ".ref is "
                + ref.getApiVersion()
                + " "
                + ref.getKind()
                + "; it must name a Service "
                + "(apiVersion: v1, kind: Service) or a Knative Addressable such as apiVersion: serving.knative.dev/v1, "
                + "kind: Service or apiVersion: eventing.knative.dev/v1, kind: Broker");
      }
      if (ref.getName() == null || ref.getName().isEmpty()) {
        return invalid(field + ".ref.name is missing; name a Service in the task's namespace");
      }
      if (!DNS_LABEL.matcher(ref.getName()).matches()) {
        return invalid(
            field
                + ".ref.name '"
                + ref.getName()
                + "' is not a DNS label; name a Service in the task's "
                + "namespace: lower-case letters, digits and '-', starting and ending with a letter or digit, at most 63 "
                + "characters");
      }
      if (uri != null && !uri.startsWith("/")) {
        return invalid(
            field
                + ".uri '"
                + uri
                + "' must be a path such as /orders/cancel when "
                + field
                + ".ref is set");
      }
      if (!isCoreService(ref)
          && refKinds.verdict(namespace, ref.getApiVersion(), ref.getKind())
              instanceof RefKinds.Verdict.Refused refused) {
        return invalid(
            field + ".ref is " + ref.getApiVersion() + " " + ref.getKind() + ": " + refused.why());
      }
      return null;
    }
    URI parsed;
    try {
      parsed = new URI(uri);
    } catch (URISyntaxException e) {
      return invalid(
          field
              + ".uri '"
              + uri
              + "' is not a URL ("
              + e.getReason()
              + "); use an absolute URL such as "
              + "https://hooks.example.com/due");
    }
    if (!parsed.isAbsolute()
        || parsed.getHost() == null
        || !("http".equals(parsed.getScheme()) || "https".equals(parsed.getScheme()))) {
      return invalid(
          field
              + ".uri '"
              + uri
              + "' must be an absolute http:// or https:// URL, or a path with "
              + field
              + ".ref naming a Service");
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
      return invalid(
          field
              + ".uri '"
              + uri
              + "' is not allowed: no entry of the operator's "
              + SinkConfig.ALLOWED_URIS
              + " ("
              + (sinkConfig.allowedUris().isEmpty()
                  ? "none set"
                  : String.join(", ", sinkConfig.allowedUris()))
              + ") allows its scheme, host, port and path; name a Service in this namespace with "
              + field
              + ".ref instead, or ask the operator's administrators to allow the URL");
    }
    if (destination.getAudience() != null && "http".equals(parsed.getScheme())) {
      return invalid(
          field
              + ".audience is set and "
              + field
              + ".uri '"
              + uri
              + "' is plain http: a token is sent only "
              + "over https or to a Service of this namespace; use an https:// URL, name a Service with "
              + field
              + ".ref, or remove "
              + field
              + ".audience");
    }
    return null;
  }

  /**
   * spec.data, spec.contentType and spec.ceOverrides: what the CRD's rules say, and whether JSON
   * data is JSON.
   */
  private static Validation checkEvent(DelayedTaskSpec spec) {
    String data = spec.getData();
    String contentType = spec.getContentType();
    CeOverrides overrides = spec.getCeOverrides();
    if (spec.getSink() == null) {
      if (data != null) {
        return invalid(
            "spec.data is the body of a sink's request and applies only to spec.sink; add spec.sink or "
                + "remove spec.data (spec.payload reaches a Job as annotations)");
      }
      if (overrides != null) {
        return invalid(
            "spec.ceOverrides adds CloudEvents attributes to a sink's request and applies only to "
                + "spec.sink; add spec.sink or remove spec.ceOverrides");
      }
    }
    if (contentType != null && (spec.getSink() == null || data == null)) {
      return invalid(
          "spec.contentType is the Content-Type of spec.data and applies only with spec.sink and "
              + "spec.data; add them or remove spec.contentType");
    }
    if (data != null && data.length() > DelayedTaskSpec.DATA_MAX_LENGTH) {
      return invalid(
          "spec.data has "
              + data.length()
              + " characters; at most "
              + DelayedTaskSpec.DATA_MAX_LENGTH
              + " are sent");
    }
    if (contentType != null
        && (contentType.length() > DelayedTaskSpec.CONTENT_TYPE_MAX_LENGTH
            || !MEDIA_TYPE.matcher(contentType).matches())) {
      return invalid(
          "spec.contentType '"
              + contentType
              + "' must be a media type such as application/json, "
              + "text/plain or application/xml");
    }
    if (data != null
        && EventBodies.isJson(EventBodies.contentType(contentType))
        && !EventBodies.isJsonText(data)) {
      return invalid(
          "spec.data is not valid JSON, and spec.contentType is "
              + EventBodies.contentType(contentType)
              + (contentType == null ? " (the default)" : "")
              + "; fix spec.data, or set spec.contentType to the data's media type, such as text/plain");
    }
    if (overrides != null && overrides.getExtensions() != null) {
      Map<String, String> extensions = overrides.getExtensions();
      if (extensions.size() > CeOverrides.MAX_EXTENSIONS) {
        return invalid(
            "spec.ceOverrides.extensions has "
                + extensions.size()
                + " entries; at most "
                + CeOverrides.MAX_EXTENSIONS);
      }
      for (Map.Entry<String, String> extension : new TreeMap<>(extensions).entrySet()) {
        String name = extension.getKey();
        String field = "spec.ceOverrides.extensions." + name;
        if (!EXTENSION_NAME.matcher(name).matches()) {
          return invalid(
              "spec.ceOverrides.extensions name '"
                  + name
                  + "' must be 1 to 20 lowercase letters or "
                  + "digits (a CloudEvents extension name), such as team or region");
        }
        if (CeOverrides.CLOUDEVENTS_ATTRIBUTES.contains(name)) {
          return invalid(
              field
                  + ": "
                  + name
                  + " is a CloudEvents attribute the operator sets; use another name");
        }
        if (name.startsWith(CeOverrides.RESERVED_PREFIX)) {
          return invalid(
              field
                  + ": names beginning with delayedtask are the operator's own; use another name");
        }
        if (extension.getValue() == null) {
          return invalid(field + " has no value; give it a string or remove it");
        }
        if (extension.getValue().length() > CeOverrides.VALUE_MAX_LENGTH) {
          return invalid(
              field
                  + " has "
                  + extension.getValue().length()
                  + " characters; a value is at most "
                  + CeOverrides.VALUE_MAX_LENGTH);
        }
      }
    }
    return null;
  }

  /**
   * What keeps {@code pem} from being trusted for https (the sender parses it the same way), or
   * null.
   */
  private static String pemProblem(String pem) {
    try {
      Collection<? extends Certificate> certificates =
          CertificateFactory.getInstance("X.509")
              .generateCertificates(
                  new ByteArrayInputStream(pem.getBytes(StandardCharsets.US_ASCII)));
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
      return invalid(field + " '" + value + "' " + e.getMessage() + "; use " + Durations.EXAMPLE);
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

  private static Validation invalid(String message) {
    return new Validation.Invalid(message);
  }
}
