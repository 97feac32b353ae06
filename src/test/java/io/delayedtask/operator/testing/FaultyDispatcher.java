package io.delayedtask.operator.testing;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.mockwebserver.ServerRequest;
import io.fabric8.mockwebserver.ServerResponse;
import io.fabric8.mockwebserver.dsl.HttpMethod;
import io.fabric8.mockwebserver.http.Buffer;
import io.fabric8.mockwebserver.http.Dispatcher;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.fabric8.mockwebserver.internal.MockDispatcher;
import io.fabric8.mockwebserver.internal.SimpleRequest;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.UnaryOperator;

/**
 * The mock API server's dispatcher: expectations first, then the CRUD store (the same order as
 * fabric8's {@code KubernetesMixedDispatcher}, with the {@link IndexedCrudDispatcher} as the
 * store), plus two additions: injected faults ({@link ApiFault}) answer before either, and every
 * answered request is recorded ({@link ApiCall}) so a test can count Job creations and status
 * writes.
 */
final class FaultyDispatcher extends Dispatcher {
  private final Map<ServerRequest, Queue<ServerResponse>> expectations;
  private final MockDispatcher expected;
  private final IndexedCrudDispatcher store = new IndexedCrudDispatcher();
  private final List<ApiFault> faults = new CopyOnWriteArrayList<>();

  /** Appended on every request: a copy-on-write list would copy all earlier calls each time. */
  private final List<ApiCall> calls = Collections.synchronizedList(new ArrayList<>());

  private final List<Planting> plantings = new CopyOnWriteArrayList<>();

  /**
   * Before the first creation whose body contains {@code fragment}, store {@code
   * foreign.apply(body)} there.
   */
  record Planting(String fragment, UnaryOperator<String> foreign, AtomicBoolean used) {}

  FaultyDispatcher(Map<ServerRequest, Queue<ServerResponse>> expectations) {
    this.expectations = expectations;
    this.expected = new MockDispatcher(expectations);
  }

  void inject(ApiFault fault) {
    faults.add(fault);
  }

  void plant(String fragment, UnaryOperator<String> foreign) {
    plantings.add(new Planting(fragment, foreign, new AtomicBoolean()));
  }

  void clearFaults() {
    faults.clear();
  }

  List<ApiCall> calls() {
    synchronized (calls) {
      return List.copyOf(calls);
    }
  }

  /** An expectation set on the server answers first; everything else goes to the CRUD store. */
  private MockResponse expectedOrStored(RecordedRequest request) {
    Queue<ServerResponse> expectation =
        expectations.get(
            new SimpleRequest(HttpMethod.valueOf(request.getMethod()), request.getPath()));
    return expectation != null && !expectation.isEmpty()
        ? expected.dispatch(request)
        : store.dispatch(request);
  }

  /**
   * The CRUD store answers a create of an existing name with 409 and reason "Invalid"; a real API
   * server says "AlreadyExists", which is what the operator (like every controller) tells apart
   * from other conflicts. Rewritten here so tests exercise the real-world path.
   */
  private static MockResponse alreadyExistsLikeARealApiServer(
      RecordedRequest request, MockResponse response) {
    if (!"POST".equals(request.getMethod()) || response.code() != 409) {
      return response;
    }
    String original =
        response.getBody() == null
            ? ""
            : new String(response.getBody().getBytes(), StandardCharsets.UTF_8);
    String status =
        """
        {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"%s","reason":"AlreadyExists","code":409}"""
            .formatted(
                ("already exists: " + original)
                    .replace("\\", "")
                    .replace("\"", "'")
                    .replace("\n", " "));
    return response.setBody(status);
  }

  /**
   * The CRUD store ignores metadata.resourceVersion on PUT; a real API server refuses a stale one
   * with 409 Conflict, and the operator's status writes rely on that (a status built from a stale
   * cached task must not overwrite a newer one, e.g. a former leader's after a pause). Checked
   * here, one PUT at a time.
   */
  private synchronized MockResponse putWithOptimisticLocking(RecordedRequest request, String body) {
    String sent = resourceVersion(body);
    if (sent != null) {
      String path = request.getPath();
      int query = path.indexOf('?');
      String objectPath =
          (query < 0 ? path : path.substring(0, query)).replaceFirst("/status$", "");
      MockResponse current =
          expectedOrStored(
              new RecordedRequest(
                  request.getHttpVersion(),
                  HttpMethod.GET,
                  objectPath,
                  request.getHeaders(),
                  new Buffer()));
      if (current.code() == 200) {
        String stored =
            resourceVersion(new String(current.getBody().getBytes(), StandardCharsets.UTF_8));
        if (stored != null && !stored.equals(sent)) {
          return new MockResponse()
              .setResponseCode(409)
              .setHeader("Content-Type", "application/json")
              .setBody(
                  """
              {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Operation cannot be \
              fulfilled on %s: the object has been modified; please apply your changes to the latest version and \
              try again","reason":"Conflict","code":409}"""
                      .formatted(objectPath));
        }
      }
    }
    return expectedOrStored(request);
  }

  private static String resourceVersion(String json) {
    if (json == null || json.isBlank()) {
      return null;
    }
    try {
      JsonNode version =
          Serialization.jsonMapper().readTree(json).path("metadata").path("resourceVersion");
      return version.isTextual() && !version.asText().isEmpty() ? version.asText() : null;
    } catch (Exception e) {
      return null;
    }
  }

  @Override
  public MockResponse dispatch(RecordedRequest request) {
    // getBytes() leaves the body in place for the CRUD store; readUtf8() would consume it.
    String body =
        request.getBody() == null
            ? null
            : new String(request.getBody().getBytes(), StandardCharsets.UTF_8);
    if ("POST".equals(request.getMethod())
        && body != null
        && !IndexedCrudDispatcher.isDryRun(request.getPath())) {
      for (Planting planting : plantings) {
        if (body.contains(planting.fragment()) && planting.used().compareAndSet(false, true)) {
          // Someone else got there first: the same name, stored just before the request lands.
          byte[] foreign = planting.foreign().apply(body).getBytes(StandardCharsets.UTF_8);
          MockResponse planted =
              expectedOrStored(
                  new RecordedRequest(
                      request.getHttpVersion(),
                      HttpMethod.POST,
                      request.getPath(),
                      request.getHeaders(),
                      new Buffer(foreign)));
          calls.add(
              new ApiCall(Instant.now(), "PLANT", request.getPath(), planted.code(), true, null));
        }
      }
    }
    for (ApiFault fault : faults) {
      if (fault.claim(request, body)) {
        ApiCall call =
            new ApiCall(
                Instant.now(), request.getMethod(), request.getPath(), fault.code(), true, null);
        calls.add(
            call.isJobCreation()
                ? new ApiCall(call.at(), call.method(), call.path(), call.code(), true, body)
                : call);
        MockResponse response =
            new MockResponse()
                .setResponseCode(fault.code())
                .setHeader("Content-Type", "application/json")
                .setBody(fault.statusBody());
        if (fault.code() == 429) {
          response.setHeader("Retry-After", "1");
        }
        if (!fault.delay().isZero()) {
          response.setBodyDelay(fault.delay());
        }
        return response;
      }
    }
    MockResponse response =
        "PUT".equals(request.getMethod())
            ? putWithOptimisticLocking(request, body)
            : alreadyExistsLikeARealApiServer(request, expectedOrStored(request));
    ApiCall call =
        new ApiCall(
            Instant.now(), request.getMethod(), request.getPath(), response.code(), false, null);
    calls.add(
        call.isJobCreation()
            ? new ApiCall(call.at(), call.method(), call.path(), call.code(), false, body)
            : call);
    return response;
  }
}
