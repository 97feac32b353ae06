package io.delayedtask.operator.testing;

import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.ServerRequest;
import io.fabric8.mockwebserver.ServerResponse;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.function.Predicate;
import java.util.function.UnaryOperator;

/**
 * The fabric8 mock API server in CRUD mode over plain http, ready for operator processes: the
 * DelayedTask CRD registered (so the status subresource rules apply), the SelfSubjectRulesReview
 * that JOSDK posts before leader election answered with "everything allowed", faults injectable and
 * every request recorded.
 *
 * <p>The tests' only mock API server, kept for what a real one cannot do on cue: inject 409/429/500
 * bursts ({@link ApiFault}), hold requests, plant a foreign object, skip CEL (BadInputIT), count
 * requests (the scale runs). Everything else runs on {@link RealKubernetes}.
 */
public final class MockApiServer implements AutoCloseable {
  private static final String RULES_REVIEW =
      """
      {"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectRulesReview","spec":{},
       "status":{"incomplete":false,"nonResourceRules":[{"verbs":["*"],"nonResourceURLs":["*"]}],
       "resourceRules":[{"verbs":["*"],"apiGroups":["*"],"resources":["*"]}]}}""";

  /** Held so the level sticks: the mock logs every request at INFO through java.util.logging. */
  private static final java.util.logging.Logger MOCK_LOG = quiet("io.fabric8.mockwebserver");

  private final KubernetesMockServer server;
  private final FaultyDispatcher dispatcher;
  private final KubernetesClient client;

  private MockApiServer() {
    Map<ServerRequest, Queue<ServerResponse>> responses = new HashMap<>();
    dispatcher = new FaultyDispatcher(responses);
    server =
        new KubernetesMockServer(new Context(), new MockWebServer(), responses, dispatcher, false);
    server.init(InetAddress.getLoopbackAddress(), 0);
    server
        .expect()
        .post()
        .withPath("/apis/authorization.k8s.io/v1/selfsubjectrulesreviews")
        .andReturn(201, RULES_REVIEW)
        .always();
    client = server.createClient();
    registerCrds();
  }

  public static MockApiServer start() {
    return new MockApiServer();
  }

  /** The server's base URL without a trailing slash, as a kubeconfig wants it. */
  public String url() {
    String url = server.url("/");
    return url.endsWith("/") ? url.substring(0, url.length() - 1) : url;
  }

  /** A kubeconfig file pointing at this server, for an operator process's KUBECONFIG. */
  public Path writeKubeconfig(Path file, String namespace) {
    return Kubeconfig.write(file, url(), namespace);
  }

  /**
   * A client for the test itself; injected faults match its requests too, so inject after setting
   * up.
   */
  public KubernetesClient client() {
    return client;
  }

  /** A separate client, e.g. one per operator instance; the caller closes it. */
  public KubernetesClient newClient() {
    return server.createClient();
  }

  public KubernetesMockServer server() {
    return server;
  }

  public ApiFault inject(ApiFault fault) {
    dispatcher.inject(fault);
    return fault;
  }

  /**
   * Just before the first creation request whose body contains {@code fragment} reaches the store,
   * stores {@code foreign.apply(requestBody)} under the same path, so the real request meets
   * AlreadyExists from an object someone else made (without knowing the name in advance).
   */
  public void plantBeforeFirstCreation(String fragment, UnaryOperator<String> foreign) {
    dispatcher.plant(fragment, foreign);
  }

  public void clearFaults() {
    dispatcher.clearFaults();
  }

  public List<ApiCall> calls() {
    return dispatcher.calls();
  }

  public List<ApiCall> calls(Predicate<ApiCall> filter) {
    return dispatcher.calls().stream().filter(filter).toList();
  }

  @Override
  public void close() {
    client.close();
    server.destroy();
  }

  private static java.util.logging.Logger quiet(String name) {
    java.util.logging.Logger logger = java.util.logging.Logger.getLogger(name);
    logger.setLevel(java.util.logging.Level.WARNING);
    return logger;
  }

  private void registerCrds() {
    Path crds = Path.of("crds");
    try (DirectoryStream<Path> files = Files.newDirectoryStream(crds, "*.yml")) {
      for (Path file : files) {
        try (InputStream in = Files.newInputStream(file)) {
          CustomResourceDefinition crd =
              Serialization.unmarshal(in, CustomResourceDefinition.class);
          client.apiextensions().v1().customResourceDefinitions().resource(crd).create();
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(
          "could not register the CRDs from " + crds.toAbsolutePath(), e);
    }
  }
}
