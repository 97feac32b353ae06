package io.delayedtask.operator.sink;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.Destination;
import io.delayedtask.operator.config.SinkConfig;
import io.delayedtask.operator.schedule.ClaimedEntry;
import io.delayedtask.operator.sink.DeliveryOutcome.Target;
import io.delayedtask.operator.sink.signing.SigningKeys;
import io.delayedtask.operator.sink.signing.SigningSecretException;
import io.delayedtask.operator.sink.signing.SigningSecrets;
import io.delayedtask.operator.task.job.ApiErrors;
import io.delayedtask.operator.task.job.TaskTrace;
import io.delayedtask.operator.trace.Tracing;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Consumer;

/**
 * Sends a sink task's delivery attempt: resolves its destination (a Service ref, or an allowed
 * URI), gets the ServiceAccount token its {@code audience} asks for, builds the CloudEvent, and
 * hands the request to the {@link Sender}, which answers later on its own threads. What cannot be
 * sent (a missing Service, a missing ServiceAccount) is an outcome too, recorded the same way.
 *
 * <p>The outcome carries the Redis clock at the attempt's end ({@link
 * ClaimedEntry#redisClockNow()}), so the next attempt's score never depends on this host's wall
 * clock and is never earlier than the backoff or Retry-After measured from the answer. A first
 * attempt's lag (from the due time to its claim) goes to {@code firstAttemptLag}: the reconciler's
 * fire-lag histogram.
 */
public final class SinkDeliveryStarter implements DeliveryStarter {
  private final Sender sender;
  private final Destinations destinations;
  private final ServiceAccountTokens tokens;
  private final SinkConfig config;
  private final DeliveryOutcomes outcomes;
  private final Consumer<Duration> firstAttemptLag;
  private final Clock clock;
  private final SigningSecrets signingSecrets;
  private final Tracing tracing;

  /** Without signing secrets: a task with {@code signing} fails its attempts, saying so (tests). */
  public SinkDeliveryStarter(
      Sender sender,
      Destinations destinations,
      ServiceAccountTokens tokens,
      SinkConfig config,
      DeliveryOutcomes outcomes,
      Consumer<Duration> firstAttemptLag,
      Clock clock) {
    this(
        sender,
        destinations,
        tokens,
        config,
        outcomes,
        firstAttemptLag,
        clock,
        (namespace, key, field) -> {
          throw new SigningSecretException("this operator reads no signing Secrets");
        });
  }

  public SinkDeliveryStarter(
      Sender sender,
      Destinations destinations,
      ServiceAccountTokens tokens,
      SinkConfig config,
      DeliveryOutcomes outcomes,
      Consumer<Duration> firstAttemptLag,
      Clock clock,
      SigningSecrets signingSecrets) {
    this(
        sender,
        destinations,
        tokens,
        config,
        outcomes,
        firstAttemptLag,
        clock,
        signingSecrets,
        Tracing.off());
  }

  /**
   * With {@code tracing}: each attempt a {@code delayedtask.deliver} span, its context in {@code
   * traceparent}.
   */
  public SinkDeliveryStarter(
      Sender sender,
      Destinations destinations,
      ServiceAccountTokens tokens,
      SinkConfig config,
      DeliveryOutcomes outcomes,
      Consumer<Duration> firstAttemptLag,
      Clock clock,
      SigningSecrets signingSecrets,
      Tracing tracing) {
    this.signingSecrets = signingSecrets;
    this.tracing = tracing;
    this.sender = sender;
    this.destinations = destinations;
    this.tokens = tokens;
    this.config = config;
    this.outcomes = outcomes;
    this.firstAttemptLag = firstAttemptLag;
    this.clock = clock;
  }

  /**
   * Prepares the attempt, then sends it, or (when it cannot be sent) takes why as its outcome;
   * either way the outcome is completed in one place, with the Redis clock at the attempt's end.
   */
  @Override
  public void start(DelayedTask task, Instant due, ClaimedEntry claim, DeliveryAttempt attempt) {
    ResourceID id = ResourceID.fromResource(task);
    if (attempt.attempt() == 1) {
      firstAttemptLag.accept(Duration.between(due, claim.claimedAt()));
    }
    Preparation preparation = prepare(task, due, attempt);
    CompletionStage<DeliveryOutcome.Result> result;
    if (preparation instanceof Preparation.Ready ready) {
      result = send(task, due, attempt, id, ready);
    } else {
      Preparation.Unsendable unsendable = (Preparation.Unsendable) preparation;
      result =
          CompletableFuture.completedFuture(
              new DeliveryOutcome.Result.NotSent(
                  clock.instant(), unsendable.why(), unsendable.retryable()));
    }
    result.thenAccept(
        ended ->
            outcomes.completed(
                id,
                new DeliveryOutcome(
                    task.getMetadata().getUid(),
                    due,
                    attempt.target(),
                    attempt.attempt(),
                    preparation.url(),
                    claim.redisClockNow(),
                    ended)));
  }

  /** An attempt made ready to send ({@code url}: where it goes), or why it cannot be sent. */
  private sealed interface Preparation {
    String url();

    record Ready(String url, DeliveryRequest request) implements Preparation {}

    /** {@code url}: the destination as far as it was resolved (a name, when it could not be). */
    record Unsendable(String url, String why, boolean retryable) implements Preparation {}
  }

  /** The destination resolved, the token and the signing keys had, the CloudEvent built. */
  private Preparation prepare(DelayedTask task, Instant due, DeliveryAttempt attempt) {
    String namespace = task.getMetadata().getNamespace();
    String uid = task.getMetadata().getUid();
    Destination destination =
        attempt.target() == Target.SINK
            ? task.getSpec().getSink()
            : task.getSpec().getDelivery().getDeadLetterSink();
    Destinations.Resolution resolution = resolve(namespace, destination);
    if (resolution instanceof Destinations.Resolution.Unresolvable unresolvable) {
      return new Preparation.Unsendable(
          describe(destination), unresolvable.message(), unresolvable.retryable());
    }
    Destinations.Resolution.Resolved resolved = (Destinations.Resolution.Resolved) resolution;
    String url = resolved.url().toString();
    Optional<String> token = Optional.empty();
    if (destination.getAudience() != null) {
      if (!"https".equals(resolved.url().getScheme()) && !resolved.inCluster()) {
        // A token goes only over https, or to a Service of the task's namespace (not an
        // ExternalName).
        return new Preparation.Unsendable(
            url,
            "sink.audience is set, and a token is sent "
                + "only over https or to a Service of this namespace, not to "
                + url
                + "; use an https:// URL or "
                + "remove sink.audience",
            false);
      }
      try {
        token = Optional.of(tokens.tokenFor(namespace, destination.getAudience()));
      } catch (MissingServiceAccountException e) {
        return new Preparation.Unsendable(url, e.getMessage(), false);
      } catch (KubernetesClientException e) {
        return new Preparation.Unsendable(
            url,
            "the ServiceAccount token could not be had: " + ApiErrors.reason(e),
            ApiErrors.isTransient(e));
      }
    }
    Optional<SigningKeys> signing = Optional.empty();
    if (destination.getSigning() != null) {
      try {
        signing =
            Optional.of(
                signingSecrets.keysFor(
                    namespace,
                    destination.getSigning().getKey(),
                    attempt.target() == Target.SINK
                        ? "sink.signing.key"
                        : "delivery.deadLetterSink.signing.key"));
      } catch (SigningSecretException e) {
        // Never sent unsigned: the attempt fails, and is retried (the Secret may be fixed
        // meanwhile).
        return new Preparation.Unsendable(
            url, "not sent, it could not be signed: " + e.getMessage(), true);
      }
    }
    Map<String, String> extensions = new HashMap<>();
    if (task.getSpec().getCeOverrides() != null
        && task.getSpec().getCeOverrides().getExtensions() != null) {
      extensions.putAll(task.getSpec().getCeOverrides().getExtensions());
    }
    extensions.putAll(
        attempt.extensions()); // the operator's own (delayedtask...): no override may name them
    if (attempt.target() == Target.DEAD_LETTER_SINK) {
      extensions.put("delayedtaskerrordest", sinkUrl(task));
    }
    DeliveryRequest.TaskEvent event =
        new DeliveryRequest.TaskEvent(
            uid + "." + due.toEpochMilli(),
            "/apis/delayedtask.io/v1alpha1/namespaces/"
                + namespace
                + "/delayedtasks/"
                + task.getMetadata().getName(),
            due,
            attempt.targetAttempt(),
            task.getSpec().getPayload() == null ? Map.of() : task.getSpec().getPayload(),
            Optional.ofNullable(task.getSpec().getData())
                .map(
                    data ->
                        new DeliveryRequest.Data(
                            EventBodies.contentType(task.getSpec().getContentType()), data)),
            extensions);
    return new Preparation.Ready(
        url,
        new DeliveryRequest(
            resolved.url(),
            resolved.reach(),
            event,
            token,
            Optional.ofNullable(destination.getCaCerts()),
            attempt.timeout(),
            signing));
  }

  /**
   * Hands the request to the sender, in a span of its own; the stage completes with the attempt's
   * end.
   */
  private CompletionStage<DeliveryOutcome.Result> send(
      DelayedTask task,
      Instant due,
      DeliveryAttempt attempt,
      ResourceID id,
      Preparation.Ready ready) {
    // Each attempt a span of its own, its parent the firing's (the task's trace):
    // docs/reference.md, "Trace context".
    Tracing.Delivery span =
        tracing.deliver(
            TaskTrace.of(task, due),
            task.getMetadata().getNamespace(),
            task.getMetadata().getName(),
            task.getMetadata().getUid(),
            attempt.attempt(),
            attempt.target() == Target.DEAD_LETTER_SINK,
            ready.request().url());
    DeliveryRequest request = ready.request().withTraceHeaders(span.headers());
    outcomes.sending(id);
    return sender
        .send(request)
        .handle(
            (result, error) -> {
              endSpan(span, result);
              return error == null
                  ? new DeliveryOutcome.Result.Sent(result)
                  : new DeliveryOutcome.Result.NotSent(
                      clock.instant(), "the client failed: " + error, true);
            });
  }

  private static void endSpan(Tracing.Delivery span, DeliveryResult result) {
    if (result instanceof DeliveryResult.Answered answered) {
      span.end(OptionalInt.of(answered.status()), null);
    } else if (result instanceof DeliveryResult.NoAnswer noAnswer) {
      span.end(
          OptionalInt.empty(),
          noAnswer.why().startsWith("no answer within") ? "timeout" : noAnswer.why());
    } else if (result instanceof DeliveryResult.Forbidden) {
      span.end(OptionalInt.empty(), "forbidden_address");
    } else {
      span.end(OptionalInt.empty(), "_OTHER");
    }
  }

  private Destinations.Resolution resolve(String namespace, Destination destination) {
    Optional<Destinations.ServiceRef> ref =
        Optional.ofNullable(destination.getRef())
            .map(r -> new Destinations.ServiceRef(r.getApiVersion(), r.getKind(), r.getName()));
    return destinations.resolve(namespace, ref, Optional.ofNullable(destination.getUri()));
  }

  /** The sink's URL, for the dead-letter sink's ce-delayedtaskerrordest. */
  private String sinkUrl(DelayedTask task) {
    Destinations.Resolution sink =
        resolve(task.getMetadata().getNamespace(), task.getSpec().getSink());
    return sink instanceof Destinations.Resolution.Resolved resolved
        ? resolved.url().toString()
        : describe(task.getSpec().getSink());
  }

  private static String describe(Destination destination) {
    return destination.getRef() != null
        ? destination.getRef().getKind()
            + " "
            + destination.getRef().getName()
            + (destination.getUri() == null ? "" : destination.getUri())
        : String.valueOf(destination.getUri());
  }
}
