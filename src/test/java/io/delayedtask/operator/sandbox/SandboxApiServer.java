package io.delayedtask.operator.sandbox;

import io.delayedtask.operator.testing.IndexedCrudDispatcher;
import io.delayedtask.operator.testing.KubectlDiscovery;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMixedDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.ServerRequest;
import io.fabric8.mockwebserver.ServerResponse;
import io.fabric8.mockwebserver.http.Dispatcher;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Queue;

/**
 * An embedded Kubernetes API for the sandbox: the fabric8 mock server in CRUD mode on loopback,
 * with the DelayedTask CRD registered, discovery served for kubectl, and the permission check of
 * JOSDK's leader election answered.
 */
final class SandboxApiServer implements AutoCloseable {
  private final KubernetesMockServer server;
  private final KubernetesClient client;

  SandboxApiServer(Path crd, int port) {
    Map<ServerRequest, Queue<ServerResponse>> responses = new HashMap<>();
    KubernetesMixedDispatcher mixed = new KubernetesMixedDispatcher(responses);
    // The stock store would keep what a dry run creates (the operator dry-runs each Job task's
    // Job).
    Dispatcher dryRunAware =
        new Dispatcher() {
          @Override
          public MockResponse dispatch(RecordedRequest request) {
            return "POST".equals(request.getMethod())
                    && IndexedCrudDispatcher.isDryRun(request.getPath())
                ? IndexedCrudDispatcher.dryRunCreate(request)
                : mixed.dispatch(request);
          }
        };
    server =
        new KubernetesMockServer(new Context(), new MockWebServer(), responses, dryRunAware, false);
    server.init(InetAddress.getLoopbackAddress(), port);
    KubectlDiscovery.serve(server);
    // JOSDK checks it may use the Lease before it campaigns; the sandbox user may do everything.
    server
        .expect()
        .post()
        .withPath("/apis/authorization.k8s.io/v1/selfsubjectrulesreviews")
        .andReturn(
            201,
            """
            {"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectRulesReview",
             "status":{"incomplete":false,"resourceRules":[{"verbs":["*"],"apiGroups":["*"],"resources":["*"]}],
             "nonResourceRules":[]}}""")
        .always();
    client = server.createClient();
    try (InputStream in = Files.newInputStream(crd)) {
      client.apiextensions().v1().customResourceDefinitions().load(in).create();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read the CRD " + crd, e);
    }
  }

  /** The API server's address, for a kubeconfig: http://127.0.0.1:port, no trailing slash. */
  String url() {
    return server.url("/").replaceAll("/$", "");
  }

  KubernetesClient client() {
    return client;
  }

  @Override
  public void close() {
    client.close();
    server.destroy();
  }
}
