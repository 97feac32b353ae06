package io.delayedtask.operator.sink;

import io.delayedtask.operator.sink.signing.SigningKeys;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * One HTTP delivery attempt of a task's CloudEvent (docs/reference.md, "Delivering to a service"),
 * everything already resolved: the sender neither reads Kubernetes nor decides about retries.
 *
 * @param url the URL to POST to ({@code http} or {@code https}), as the task names it
 * @param reach what the sender may connect to for it, judged when it connects: a name to resolve
 *     (the URL's host, or an ExternalName's), or a Service's verified endpoints. The Host header
 *     and TLS name stay the URL's.
 * @param event the CloudEvent's attributes and body
 * @param bearerToken sent as {@code Authorization: Bearer <token>} when present
 * @param caCertsPem PEM certificates trusted for https besides the JVM's
 * @param timeout the whole attempt (connect, write, answer), cut after this long
 * @param signing when present, the secrets that sign the attempt (Standard Webhooks headers); a
 *     request that carries them is never sent without its signature
 * @param traceHeaders the attempt's W3C trace context ({@code traceparent}, {@code tracestate}),
 *     sent as headers
 */
public record DeliveryRequest(
    URI url,
    Reach reach,
    TaskEvent event,
    Optional<String> bearerToken,
    Optional<String> caCertsPem,
    Duration timeout,
    Optional<SigningKeys> signing,
    Map<String, String> traceHeaders) {

  /** An unsigned request without trace context. */
  public DeliveryRequest(
      URI url,
      Reach reach,
      TaskEvent event,
      Optional<String> bearerToken,
      Optional<String> caCertsPem,
      Duration timeout) {
    this(url, reach, event, bearerToken, caCertsPem, timeout, Optional.empty());
  }

  /** Without trace context. */
  public DeliveryRequest(
      URI url,
      Reach reach,
      TaskEvent event,
      Optional<String> bearerToken,
      Optional<String> caCertsPem,
      Duration timeout,
      Optional<SigningKeys> signing) {
    this(url, reach, event, bearerToken, caCertsPem, timeout, signing, Map.of());
  }

  /** This request with the attempt's trace context headers. */
  public DeliveryRequest withTraceHeaders(Map<String, String> headers) {
    return new DeliveryRequest(
        url, reach, event, bearerToken, caCertsPem, timeout, signing, headers);
  }

  /** The ce-source's form: the task's namespace is its fourth segment. */
  private static final java.util.regex.Pattern SOURCE =
      java.util.regex.Pattern.compile("/apis/[^/]+/[^/]+/namespaces/([^/]+)/.*");

  /**
   * The namespace of the task this request delivers for, read from its {@code ce-source} ({@code
   * /apis/delayedtask.io/v1alpha1/namespaces/<ns>/delayedtasks/<name>}, docs/reference.md); "" when
   * the source has another form.
   */
  public String namespace() {
    java.util.regex.Matcher matcher = SOURCE.matcher(event.source());
    return matcher.matches() ? matcher.group(1) : "";
  }

  public DeliveryRequest {
    Objects.requireNonNull(url, "url");
    Objects.requireNonNull(reach, "reach");
    Objects.requireNonNull(event, "event");
    Objects.requireNonNull(bearerToken, "bearerToken");
    Objects.requireNonNull(caCertsPem, "caCertsPem");
    Objects.requireNonNull(timeout, "timeout");
    Objects.requireNonNull(signing, "signing");
    traceHeaders = Map.copyOf(traceHeaders);
  }

  /**
   * The CloudEvent: {@code ce-specversion: 1.0}, {@code ce-type: io.delayedtask.task.due}, and
   *
   * @param id {@code ce-id}: {@code <uid>.<due epoch ms>}, the same for every attempt at one due
   *     time
   * @param source {@code ce-source}: {@code
   *     /apis/delayedtask.io/v1alpha1/namespaces/<ns>/delayedtasks/<name>}
   * @param time {@code ce-time}: the due time
   * @param attempt {@code ce-delayedtaskattempt}: 1, 2, ...
   * @param payload the body, as a JSON object ({@code {}} when empty), when there is no {@code
   *     data}
   * @param data the body verbatim ({@code spec.data}) with its content type, instead of the payload
   * @param extensions further {@code ce-} extensions: the task's {@code ceOverrides}, and for the
   *     dead-letter sink {@code delayedtaskerrorcode} and {@code delayedtaskerrordest}
   */
  public record TaskEvent(
      String id,
      String source,
      Instant time,
      int attempt,
      Map<String, String> payload,
      Optional<Data> data,
      Map<String, String> extensions) {
    public static final String TYPE = "io.delayedtask.task.due";

    public TaskEvent {
      Objects.requireNonNull(id, "id");
      Objects.requireNonNull(source, "source");
      Objects.requireNonNull(time, "time");
      payload = Map.copyOf(payload);
      Objects.requireNonNull(data, "data");
      extensions = Map.copyOf(extensions);
    }

    /** An event whose body is the payload as a JSON object. */
    public TaskEvent(
        String id,
        String source,
        Instant time,
        int attempt,
        Map<String, String> payload,
        Map<String, String> extensions) {
      this(id, source, time, attempt, payload, Optional.empty(), extensions);
    }
  }

  /**
   * A body sent verbatim.
   *
   * @param contentType its media type, sent as {@code Content-Type}
   * @param text the body, sent as UTF-8
   */
  public record Data(String contentType, String text) {
    public Data {
      Objects.requireNonNull(contentType, "contentType");
      Objects.requireNonNull(text, "text");
    }
  }
}
