package io.delayedtask.operator.sink;

import io.delayedtask.operator.config.SinkConfig;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.io.EOFException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.ConnectException;
import java.net.Proxy;
import java.net.SocketException;
import java.net.UnknownHostException;
import java.security.cert.CertificateException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.net.SocketFactory;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLPeerUnverifiedException;
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.Dispatcher;
import okhttp3.HttpUrl;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;

/**
 * The {@link Sender} on OkHttp: requests in flight bounded overall, per host and per namespace by
 * {@link DeliverySlots} (a wait for a slot counts against the attempt's timeout), one client, and,
 * per request, a derived client (sharing pool and dispatcher) with the request's timeout, the
 * {@code Dns} its {@link Reach} asks for ({@link GuardedDns} for a name, {@link EndpointDns} for a
 * Service's verified endpoints), a {@link ConnectCheck} and, for {@code caCerts}, its TLS trust.
 *
 * <p>The check and the act are the same step: what a request may reach is judged only once it has
 * its slot, when its connection is made, by the lookup, again on the address about to be connected
 * and again on the connection (pooled or new) the request is about to be written on. Nothing judged
 * before the wait for a slot is trusted after it. Redirects are never followed and no proxy is
 * used: the address checked is the address connected to. The answer's body is never read: the
 * response is closed as soon as its status and Retry-After are known.
 */
public final class OkHttpSender implements Sender {
  /** Prometheus: delayedtask_delivery_duration_seconds, tagged by the attempt's verdict. */
  public static final String DURATION = "delayedtask.delivery.duration";

  private final OkHttpClient client;
  private final NameResolver resolver;
  private final Clock clock;
  private final Map<RetryPolicy.Verdict, Timer> durations =
      new EnumMap<>(RetryPolicy.Verdict.class);
  private final TrustedCerts trustedCerts = new TrustedCerts();
  private final DeliverySlots slots;
  private final String clusterDomain;

  public OkHttpSender(SinkConfig config, MeterRegistry registry) {
    this(config, registry, NameResolver.SYSTEM, SocketFactory.getDefault(), Clock.systemUTC());
  }

  /**
   * With the name resolver and socket factory injected: tests map names to addresses without DNS
   * and use sockets that refuse anything but loopback.
   */
  public OkHttpSender(
      SinkConfig config,
      MeterRegistry registry,
      NameResolver resolver,
      SocketFactory sockets,
      Clock clock) {
    Objects.requireNonNull(registry, "registry");
    for (RetryPolicy.Verdict verdict : RetryPolicy.Verdict.values()) {
      durations.put(
          verdict,
          Timer.builder(DURATION)
              .description("How long delivery requests took, until their answer or failure")
              .tag("outcome", outcomeTag(verdict))
              .publishPercentileHistogram()
              .register(registry));
    }
    this.resolver = Objects.requireNonNull(resolver, "resolver");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.clusterDomain = config.clusterDomain();
    // The caps are the slots' (DeliverySlots): OkHttp's own queue would hold a call with no time
    // limit.
    this.slots =
        new DeliverySlots(
            config.maxInFlight(), config.maxInFlightPerHost(), config.maxInFlightPerNamespace());
    Dispatcher dispatcher = new Dispatcher();
    dispatcher.setMaxRequests(Integer.MAX_VALUE);
    dispatcher.setMaxRequestsPerHost(Integer.MAX_VALUE);
    this.client =
        new OkHttpClient.Builder()
            .dispatcher(dispatcher)
            .followRedirects(false)
            .followSslRedirects(false)
            .proxy(Proxy.NO_PROXY)
            .socketFactory(sockets)
            // Each request sets its own call timeout; no per-phase timeout may cut it shorter.
            .connectTimeout(0, TimeUnit.MILLISECONDS)
            .readTimeout(0, TimeUnit.MILLISECONDS)
            .writeTimeout(0, TimeUnit.MILLISECONDS)
            .build();
  }

  /** The values of delayedtask_deliveries_total's outcome, so the two metrics join. */
  private static String outcomeTag(RetryPolicy.Verdict verdict) {
    return switch (verdict) {
      case DELIVERED -> "delivered";
      case RETRY -> "retry";
      case FAIL -> "failed";
    };
  }

  @Override
  public CompletionStage<DeliveryResult> send(DeliveryRequest request) {
    Instant sentAt = clock.instant();
    long started = System.nanoTime();
    CompletableFuture<DeliveryResult> result = new CompletableFuture<>();
    Attempt attempt = new Attempt(sentAt, started, result);
    HttpUrl url = HttpUrl.parse(request.url().toString());
    if (url == null) {
      attempt.forbidden(request.url() + " is not an http or https URL");
      return result;
    }
    OkHttpClient.Builder perRequest;
    Request httpRequest;
    try {
      perRequest = client.newBuilder();
      if (request.caCertsPem().isPresent()) {
        TrustedCerts.Tls tls = trustedCerts.forPem(request.caCertsPem().get());
        perRequest.sslSocketFactory(tls.socketFactory(), tls.trustManager());
      }
      httpRequest = httpRequest(url, request, sentAt);
    } catch (IllegalArgumentException | IllegalStateException e) {
      // Bad caCerts or an event the SDK rejects: the same request would fail the same way again.
      attempt.forbidden(e.getMessage());
      return result;
    }
    // The wait for a slot counts against the attempt's timeout: what is left of it is the call's.
    slots.acquire(
        url.host(),
        request.namespace(),
        request.timeout(),
        slot -> start(slot, perRequest, httpRequest, request, attempt),
        () ->
            attempt.noAnswer(
                "no answer within "
                    + human(request.timeout())
                    + " (it waited that long for one of "
                    + "the operator's delivery slots: too many requests open)"));
    return result;
  }

  private void start(
      DeliverySlots.Slot slot,
      OkHttpClient.Builder perRequest,
      Request httpRequest,
      DeliveryRequest request,
      Attempt attempt) {
    Duration left = request.timeout().minus(slot.waited());
    if (left.isNegative() || left.isZero()) {
      slot.release();
      attempt.noAnswer(
          "no answer within "
              + human(request.timeout())
              + " (it waited that long for one of the "
              + "operator's delivery slots: too many requests open)");
      return;
    }
    // Only now, with the slot held, is the destination judged: whatever it resolved to before the
    // wait counts for nothing.
    Request dialled = httpRequest;
    EndpointDns endpoints = null;
    if (request.reach() instanceof Reach.ByName byName) {
      perRequest.dns(new GuardedDns(resolver, byName, clusterDomain));
    } else {
      Reach.ServiceEndpoints service = (Reach.ServiceEndpoints) request.reach();
      EndpointCheck.Judgement now = service.judge();
      if (now.unverified().isPresent()) {
        slot.release();
        attempt.forbidden(now.unverified().get());
        return;
      }
      if (now.dialable().isEmpty()) {
        slot.release();
        attempt.noAnswer("Service " + service.service() + " has no ready endpoint");
        return;
      }
      // The Pods' port (the Service's targetPort) in the URL OkHttp connects with; the Host header
      // stays the Service's.
      int port =
          now.dialable()
              .get(java.util.concurrent.ThreadLocalRandom.current().nextInt(now.dialable().size()))
              .getPort();
      HttpUrl serviceUrl = httpRequest.url();
      dialled =
          httpRequest
              .newBuilder()
              .url(serviceUrl.newBuilder().port(port).build())
              .header(
                  "Host",
                  serviceUrl.host()
                      + (serviceUrl.port() == HttpUrl.defaultPort(serviceUrl.scheme())
                          ? ""
                          : ":" + serviceUrl.port()))
              .build();
      endpoints = new EndpointDns(service, port);
      perRequest.dns(endpoints);
    }
    ConnectCheck connectCheck = new ConnectCheck(ConnectCheck.of(request.reach(), endpoints));
    perRequest.eventListener(connectCheck).addNetworkInterceptor(connectCheck);
    Call call;
    try {
      call = perRequest.callTimeout(left).build().newCall(dialled);
    } catch (RuntimeException e) {
      slot.release();
      attempt.forbidden(e.getMessage());
      return;
    }
    // A closed sender's dispatcher refuses the call through onFailure ("executor rejected"), not by
    // throwing.
    call.enqueue(
        new Callback() {
          @Override
          public void onResponse(Call call, Response response) {
            slot.release();
            // Status and Retry-After only: the body is closed unread, never kept or logged.
            try (response) {
              attempt.answered(response.code(), retryAfter(response));
            }
          }

          @Override
          public void onFailure(Call call, IOException e) {
            slot.release();
            Optional<ConnectCheck.Refusal> refusal =
                connectCheck
                    .refusal()
                    .or(() -> forbiddenRule(e).map(ConnectCheck.Refusal::forbidden));
            if (refusal.isPresent() && refusal.get().forbidden()) {
              attempt.forbidden(refusal.get().why());
            } else if (refusal.isPresent()) {
              attempt.noAnswer(refusal.get().why());
            } else {
              attempt.noAnswer(whyNoAnswer(e, call.isCanceled(), request.timeout()));
            }
          }
        });
  }

  private static Request httpRequest(HttpUrl url, DeliveryRequest request, Instant sentAt) {
    CloudEventMessage message = CloudEventMessage.of(request.event());
    Request.Builder builder = new Request.Builder().url(url);
    String contentType = "application/json";
    for (var header : message.headers().entrySet()) {
      if (header.getKey().equalsIgnoreCase("Content-Type")) {
        // OkHttp sets Content-Type from the body's media type; a second header would duplicate it.
        contentType = header.getValue();
      } else {
        header(builder, header.getKey(), header.getValue());
      }
    }
    request.bearerToken().ifPresent(token -> builder.header("Authorization", "Bearer " + token));
    request.traceHeaders().forEach(builder::header);
    // Standard Webhooks signature over the body exactly as sent; signed here or not sent at all.
    request
        .signing()
        .ifPresent(
            keys ->
                keys.headers(request.event().id(), sentAt, message.body())
                    .forEach(builder::header));
    return builder.post(RequestBody.create(message.body(), MediaType.get(contentType))).build();
  }

  /**
   * Adds a header, or says which one HTTP does not allow without repeating its value: OkHttp's own
   * message quotes the value, and a value with a line break would then write lines of the author's
   * choosing into the task's status, its Event and the operator's log.
   */
  private static void header(Request.Builder builder, String name, String value) {
    try {
      builder.header(name, value);
    } catch (IllegalArgumentException refused) {
      boolean nameShown = name.matches("[A-Za-z0-9-]{1,64}");
      throw new IllegalArgumentException(
          nameShown
              ? "the header "
                  + name
                  + " has a value HTTP does not allow (a line break, another control character or a "
                  + "character outside ASCII); the value is not shown"
              : "a header name holds a character HTTP does not allow; the name is not shown");
    }
  }

  /** Retry-After as delay-seconds or as an HTTP-date; empty when absent or unreadable. */
  private Optional<Duration> retryAfter(Response response) {
    String value = response.header("Retry-After");
    if (value == null || value.isBlank()) {
      return Optional.empty();
    }
    String trimmed = value.trim();
    if (trimmed.chars().allMatch(Character::isDigit)) {
      try {
        return Optional.of(Duration.ofSeconds(Long.parseLong(trimmed)));
      } catch (NumberFormatException tooLong) {
        return Optional.of(RetryPolicy.MAX_RETRY_AFTER);
      }
    }
    Date date = response.headers().getDate("Retry-After");
    if (date == null) {
      return Optional.empty();
    }
    Duration until = Duration.between(clock.instant(), date.toInstant());
    return Optional.of(until.isNegative() ? Duration.ZERO : until);
  }

  private static Optional<String> forbiddenRule(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof ForbiddenAddressException forbidden) {
        return Optional.of(forbidden.rule());
      }
      for (Throwable suppressed : t.getSuppressed()) {
        Optional<String> rule = forbiddenRule(suppressed);
        if (rule.isPresent()) {
          return rule;
        }
      }
    }
    return Optional.empty();
  }

  /**
   * One short phrase for a failure without an answer; exception messages can hold anything, so few
   * are shown.
   */
  static String whyNoAnswer(IOException e, boolean canceled, Duration timeout) {
    // OkHttp's call timeout: InterruptedIOException("timeout"); a socket's: SocketTimeoutException.
    if (causedBy(e, java.net.SocketTimeoutException.class)
        || e instanceof InterruptedIOException && "timeout".equals(e.getMessage())) {
      return "no answer within " + human(timeout);
    }
    // Canceled (the sender closed), or refused by a closed sender's executor ("executor rejected").
    if (canceled || e instanceof InterruptedIOException) {
      return "canceled";
    }
    if (causedBy(e, SSLPeerUnverifiedException.class) || causedBy(e, CertificateException.class)) {
      return "TLS certificate not trusted";
    }
    if (causedBy(e, SSLException.class)) {
      return "TLS handshake failed";
    }
    if (causedBy(e, ConnectException.class)) {
      return "connection refused";
    }
    if (e instanceof UnknownHostException) {
      return "host not found";
    }
    String message = String.valueOf(e.getMessage()).toLowerCase(Locale.ROOT);
    if (causedBy(e, SocketException.class) && message.contains("reset")) {
      return "connection reset";
    }
    if (causedBy(e, EOFException.class) || message.contains("unexpected end of stream")) {
      return "connection closed before an answer";
    }
    return "connection failed";
  }

  private static boolean causedBy(Throwable e, Class<? extends Throwable> type) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (type.isInstance(t)) {
        return true;
      }
    }
    return false;
  }

  private static String human(Duration duration) {
    return duration.toMillis() % 1000 == 0
        ? duration.toSeconds() + "s"
        : duration.toMillis() + "ms";
  }

  /**
   * Stops accepting requests, cancels those in flight (their stages complete) and drops pooled
   * connections.
   */
  @Override
  public void close() {
    slots.close();
    client.dispatcher().cancelAll();
    client.dispatcher().executorService().shutdown();
    client.connectionPool().evictAll();
  }

  /** One attempt's completion: exactly once, never exceptionally, timed. */
  private final class Attempt {
    private final Instant sentAt;
    private final long started;
    private final CompletableFuture<DeliveryResult> result;

    private final AtomicBoolean settled = new AtomicBoolean();

    Attempt(Instant sentAt, long started, CompletableFuture<DeliveryResult> result) {
      this.sentAt = sentAt;
      this.started = started;
      this.result = result;
    }

    void answered(int status, Optional<Duration> retryAfter) {
      complete(new DeliveryResult.Answered(sentAt, took(), status, retryAfter));
    }

    void noAnswer(String why) {
      complete(new DeliveryResult.NoAnswer(sentAt, took(), why));
    }

    /** Never sent, so not timed. */
    void forbidden(String rule) {
      if (settled.compareAndSet(false, true)) {
        result.complete(new DeliveryResult.Forbidden(sentAt, took(), rule));
      }
    }

    /** Timed first: whoever waits for the result then also sees it in the metrics. */
    private void complete(DeliveryResult outcome) {
      if (settled.compareAndSet(false, true)) {
        durations.get(RetryPolicy.verdict(outcome)).record(outcome.took());
        result.complete(outcome);
      }
    }

    private Duration took() {
      return Duration.ofNanos(System.nanoTime() - started);
    }
  }
}
