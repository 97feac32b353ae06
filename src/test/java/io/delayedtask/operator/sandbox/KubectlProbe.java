package io.delayedtask.operator.sandbox;

import io.delayedtask.operator.testing.KubectlDiscovery;
import io.delayedtask.operator.testing.Kubeconfig;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.server.mock.KubernetesMixedDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import java.nio.file.Path;
import java.util.HashMap;

public class KubectlProbe {
  public static void main(String[] args) throws Exception {
   try { run(); } catch (Throwable t) { t.printStackTrace(System.out); System.exit(1);} }
  static void run() throws Exception {
    var responses = new HashMap<io.fabric8.mockwebserver.ServerRequest, java.util.Queue<io.fabric8.mockwebserver.ServerResponse>>();
    var server = new KubernetesMockServer(new Context(), new MockWebServer(), responses, new KubernetesMixedDispatcher(responses), false);
    server.init(java.net.InetAddress.getLoopbackAddress(), 0);
    KubectlDiscovery.serve(server);
    System.out.println("URL " + server.url("/")); Thread.sleep(Long.getLong("probe.wait", 0));
    var client = server.createClient(b -> b.editOrNewConfig().withHttp2Disable(true).endConfig());
    client.configMaps().inNamespace("default").resource(new io.fabric8.kubernetes.api.model.ConfigMapBuilder().withNewMetadata().withName("x").endMetadata().build()).create(); System.out.println("CM OK");
    try (var in = java.nio.file.Files.newInputStream(Path.of("crds/delayedtasks.delayedtask.io-v1.yml"))) {
      client.apiextensions().v1().customResourceDefinitions().load(in).create();
    }
    Kubeconfig.write(Path.of("target/probe-kubeconfig"), server.url("/").replaceAll("/$", ""), "default");
    System.out.println("READY " + server.url("/"));
    Thread.sleep(Long.MAX_VALUE);
  }
}
