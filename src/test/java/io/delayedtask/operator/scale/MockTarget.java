package io.delayedtask.operator.scale;

import io.delayedtask.operator.testing.ApiCall;
import io.delayedtask.operator.testing.MockApiServer;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.http.BasicBuilder;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.Interceptor;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The fabric8 CRUD mock ({@code IndexedCrudDispatcher}) in the harness JVM. It records every
 * request but not who sent it, so the harness counts its own requests on its side (an interceptor
 * on its client) and the operator's are the rest.
 */
final class MockTarget extends ScaleTarget {
  private final MockApiServer api = MockApiServer.start();
  private final List<ApiCall> harnessCalls = Collections.synchronizedList(new ArrayList<>());
  private final KubernetesClient client =
      new KubernetesClientBuilder()
          .withConfig(api.client().getConfiguration())
          .withHttpClientBuilderConsumer(
              builder ->
                  builder.addOrReplaceInterceptor(
                      "harness-calls",
                      new Interceptor() {
                        @Override
                        public void before(
                            BasicBuilder request, HttpRequest sent, RequestTags tags) {
                          String uri =
                              sent.uri().getRawPath()
                                  + (sent.uri().getRawQuery() == null
                                      ? ""
                                      : "?" + sent.uri().getRawQuery());
                          harnessCalls.add(
                              new ApiCall(Instant.now(), sent.method(), uri, 200, false, null));
                        }
                      }))
          .build();

  @Override
  String name() {
    return "mock";
  }

  @Override
  KubernetesClient client() {
    return client;
  }

  @Override
  void createNamespace(String namespace) {
    client
        .namespaces()
        .resource(
            new io.fabric8.kubernetes.api.model.NamespaceBuilder()
                .withNewMetadata()
                .withName(namespace)
                .endMetadata()
                .build())
        .create();
  }

  @Override
  Path operatorKubeconfig(String namespace) {
    try {
      return api.writeKubeconfig(Files.createTempFile("kubeconfig-mock-", ".yaml"), namespace);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  Map<String, String> operatorEnvironment() {
    return Map.of("KUBERNETES_HTTP2_DISABLE", "true"); // the mock speaks HTTP/1.1 over plain http
  }

  @Override
  Map<String, Long> operatorRequests(Instant from, Instant to) {
    Map<String, Long> all = count(api.calls(), from, to);
    List<ApiCall> mine;
    synchronized (harnessCalls) {
      mine = List.copyOf(harnessCalls);
    }
    count(mine, from, to)
        .forEach((key, n) -> all.merge(key.replaceFirst(" \\d{3}$", ""), -n, Long::sum));
    all.values().removeIf(n -> n <= 0);
    return all;
  }

  private static Map<String, Long> count(List<ApiCall> calls, Instant from, Instant to) {
    Map<String, Long> counts = new TreeMap<>();
    for (ApiCall call : calls) {
      if (!call.at().isBefore(from) && !call.at().isAfter(to)) {
        String key = RequestKinds.ofHttp(call.method(), call.path());
        if (call.code() >= 300) { // the mock answers a watch with code 0 or 101
          key += " " + call.code();
        }
        counts.merge(key, 1L, Long::sum);
      }
    }
    return counts;
  }

  @Override
  Map<String, ProcessHandle> serverProcesses() {
    return Map.of("harness JVM (mock API server inside)", ProcessHandle.current());
  }

  @Override
  public void close() {
    client.close();
    api.close();
  }
}
