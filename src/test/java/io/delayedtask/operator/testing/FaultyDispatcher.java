package io.delayedtask.operator.testing;

import io.fabric8.kubernetes.client.server.mock.KubernetesMixedDispatcher;
import io.fabric8.mockwebserver.ServerRequest;
import io.fabric8.mockwebserver.ServerResponse;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The CRUD mock API server with two additions: injected faults ({@link ApiFault}) answer before
 * the CRUD store does, and every answered request is recorded ({@link ApiCall}) so a test can count
 * Job creations and status writes.
 */
final class FaultyDispatcher extends KubernetesMixedDispatcher {
  private final List<ApiFault> faults = new CopyOnWriteArrayList<>();
  private final List<ApiCall> calls = new CopyOnWriteArrayList<>();

  FaultyDispatcher(Map<ServerRequest, Queue<ServerResponse>> responses) {
    super(responses);
  }

  void inject(ApiFault fault) {
    faults.add(fault);
  }

  void clearFaults() {
    faults.clear();
  }

  List<ApiCall> calls() {
    return List.copyOf(calls);
  }

  @Override
  public MockResponse dispatch(RecordedRequest request) {
    // getBytes() leaves the body in place for the CRUD store; readUtf8() would consume it.
    String body = request.getBody() == null ? null : new String(request.getBody().getBytes(), StandardCharsets.UTF_8);
    for (ApiFault fault : faults) {
      if (fault.claim(request, body)) {
        calls.add(new ApiCall(Instant.now(), request.getMethod(), request.getPath(), fault.code(), true, null));
        MockResponse response = new MockResponse()
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
    MockResponse response = super.dispatch(request);
    ApiCall call = new ApiCall(Instant.now(), request.getMethod(), request.getPath(), response.code(), false, null);
    calls.add(call.isJobCreation() ? new ApiCall(call.at(), call.method(), call.path(), call.code(), false, body) : call);
    return response;
  }
}
