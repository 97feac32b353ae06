package io.delayedtask.operator.testing;

import io.fabric8.mockwebserver.http.RecordedRequest;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import java.util.regex.Pattern;

/**
 * One misbehaviour of the mock API server: requests matching {@code method} and {@code path} (a
 * regular expression on the path without query) and {@code body} get {@code code} instead of the
 * CRUD answer, {@code times} times (negative: forever), each after {@code delay}. Once used up, the
 * CRUD store answers again, as a real API server does after a throttling burst or an outage.
 */
public final class ApiFault {
  private final String method;
  private final Pattern path;
  private final Predicate<String> body;
  private final int code;
  private final String reason;
  private final String statusReason;
  private final Duration delay;
  private final AtomicInteger remaining;
  private final AtomicInteger hits = new AtomicInteger();

  /** Whether it answers dry runs ({@code dryRun=All}) only, or (the default) real requests only. */
  private boolean dryRuns;

  private ApiFault(
      String method,
      Pattern path,
      Predicate<String> body,
      int code,
      String reason,
      String statusReason,
      Duration delay,
      int times) {
    this.method = method;
    this.path = path;
    this.body = body;
    this.code = code;
    this.reason = reason;
    this.statusReason = statusReason;
    this.delay = delay;
    this.remaining = new AtomicInteger(times);
  }

  /**
   * {@code times} answers of {@code code} to {@code method} requests whose path matches {@code
   * pathRegex}.
   */
  public static ApiFault of(String method, String pathRegex, int code, int times) {
    return new ApiFault(
        method,
        Pattern.compile(pathRegex),
        b -> true,
        code,
        reasonFor(code),
        reasonWord(code),
        Duration.ZERO,
        times);
  }

  /**
   * {@code times} requests held with no answer at all for {@code hold} (no status line, no
   * headers), and not applied: a hung API server. A 504 follows the hold, for a client long gone.
   */
  public static ApiFault hang(String method, String pathRegex, Duration hold, int times) {
    return of(method, pathRegex, 504, times)
        .withMessage("held without an answer for " + hold)
        .delayed(hold);
  }

  /** Only requests whose body contains {@code fragment} (for example one Job's name). */
  public ApiFault whenBodyContains(String fragment) {
    return keepingKind(
        new ApiFault(
            method,
            path,
            b -> b != null && b.contains(fragment),
            code,
            reason,
            statusReason,
            delay,
            remaining.get()));
  }

  /** The answer comes only after {@code value}: the client sits in the request meanwhile. */
  public ApiFault delayed(Duration value) {
    return keepingKind(
        new ApiFault(method, path, body, code, reason, statusReason, value, remaining.get()));
  }

  /** The human message in the Status body. */
  public ApiFault withMessage(String value) {
    return keepingKind(
        new ApiFault(method, path, body, code, value, statusReason, delay, remaining.get()));
  }

  /** The machine reason in the Status body (409 comes as Conflict or AlreadyExists). */
  public ApiFault withStatusReason(String value) {
    return keepingKind(
        new ApiFault(method, path, body, code, reason, value, delay, remaining.get()));
  }

  /**
   * Only dry runs ({@code dryRun=All}, the check of a Job task's template when it is scheduled);
   * without this, a fault answers real requests only, so a fault on Job creations is not spent on
   * the dry runs before them.
   */
  public ApiFault onDryRunsOnly() {
    ApiFault copy =
        new ApiFault(method, path, body, code, reason, statusReason, delay, remaining.get());
    copy.dryRuns = true;
    return copy;
  }

  private ApiFault keepingKind(ApiFault copy) {
    copy.dryRuns = dryRuns;
    return copy;
  }

  /** How many requests this fault has answered so far. */
  public int hits() {
    return hits.get();
  }

  public boolean usedUp() {
    return remaining.get() == 0;
  }

  int code() {
    return code;
  }

  Duration delay() {
    return delay;
  }

  /** The Kubernetes Status body the API server sends with such a code. */
  String statusBody() {
    return """
        {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"%s","reason":"%s","code":%d}"""
        .formatted(reason.replace("\"", "'"), statusReason, code);
  }

  /** True (and one use consumed) when this fault answers {@code request}. */
  boolean claim(RecordedRequest request, String requestBody) {
    if (!method.equalsIgnoreCase(request.getMethod())) {
      return false;
    }
    String requestPath = request.getPath();
    if (IndexedCrudDispatcher.isDryRun(requestPath) != dryRuns) {
      return false;
    }
    int query = requestPath.indexOf('?');
    if (!path.matcher(query < 0 ? requestPath : requestPath.substring(0, query)).matches()) {
      return false;
    }
    if (!body.test(requestBody)) {
      return false;
    }
    int left = remaining.getAndUpdate(n -> n > 0 ? n - 1 : n);
    if (left == 0) {
      return false;
    }
    hits.incrementAndGet();
    return true;
  }

  private static String reasonFor(int code) {
    return switch (code) {
      case 409 ->
          "the object has been modified; please apply your changes to the latest version and try again";
      case 413 -> "Request entity too large: limit is 3145728";
      case 422 ->
          "Job.batch is invalid: metadata.annotations: Too long: must have at most 262144 bytes";
      case 429 -> "Too many requests, please try again later.";
      case 500 -> "Internal error occurred: etcdserver: request timed out";
      case 503 -> "The server is currently unable to handle the request";
      default -> "injected failure " + code;
    };
  }

  private static String reasonWord(int code) {
    return switch (code) {
      case 409 -> "Conflict";
      case 413 -> "RequestEntityTooLarge";
      case 422 -> "Invalid";
      case 429 -> "TooManyRequests";
      case 500 -> "InternalError";
      case 503 -> "ServiceUnavailable";
      default -> "Unknown";
    };
  }
}
