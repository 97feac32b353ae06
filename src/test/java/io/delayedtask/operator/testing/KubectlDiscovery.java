package io.delayedtask.operator.testing;

import io.fabric8.kubernetes.api.model.APIGroup;
import io.fabric8.kubernetes.api.model.APIGroupBuilder;
import io.fabric8.kubernetes.api.model.APIGroupListBuilder;
import io.fabric8.kubernetes.api.model.APIResource;
import io.fabric8.kubernetes.api.model.APIResourceBuilder;
import io.fabric8.kubernetes.api.model.APIResourceListBuilder;
import io.fabric8.kubernetes.api.model.APIVersionsBuilder;
import io.fabric8.kubernetes.api.model.GroupVersionForDiscoveryBuilder;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.util.List;

/**
 * Serves the discovery documents kubectl reads before it does anything ({@code /api}, {@code
 * /apis}, each group-version's resource list, {@code /version}), which the fabric8 mock server does
 * not serve by itself. Only the resources the operator's users touch are listed.
 */
public final class KubectlDiscovery {
  private KubectlDiscovery() {}

  public static void serve(KubernetesMockServer server) {
    always(
        server,
        "/version",
        """
        {"major":"1","minor":"31","gitVersion":"v1.31.0-mock","platform":"linux/amd64"}""");
    always(
        server, "/api", Serialization.asJson(new APIVersionsBuilder().withVersions("v1").build()));
    always(
        server,
        "/apis",
        Serialization.asJson(
            new APIGroupListBuilder()
                .withGroups(
                    group("delayedtask.io", "v1alpha1"),
                    group("batch", "v1"),
                    group("coordination.k8s.io", "v1"),
                    group("events.k8s.io", "v1"))
                .build()));
    always(
        server,
        "/api/v1",
        resources(
            "v1",
            List.of(
                resource("namespaces", "Namespace", false, List.of("ns")),
                resource("events", "Event", true, List.of("ev")),
                resource("pods", "Pod", true, List.of("po")))));
    always(
        server,
        "/apis/delayedtask.io/v1alpha1",
        resources(
            "delayedtask.io/v1alpha1",
            List.of(
                resource("delayedtasks", "DelayedTask", true, List.of("dt")),
                resource("delayedtasks/status", "DelayedTask", true, List.of()))));
    always(
        server,
        "/apis/batch/v1",
        resources("batch/v1", List.of(resource("jobs", "Job", true, List.of()))));
    always(
        server,
        "/apis/coordination.k8s.io/v1",
        resources("coordination.k8s.io/v1", List.of(resource("leases", "Lease", true, List.of()))));
    always(
        server,
        "/apis/events.k8s.io/v1",
        resources("events.k8s.io/v1", List.of(resource("events", "Event", true, List.of("ev")))));
  }

  private static void always(KubernetesMockServer server, String path, String body) {
    // kubectl adds ?timeout=32s to discovery requests; answer both forms, forever.
    server.expect().get().withPath(path).andReturn(200, body).always();
    server.expect().get().withPath(path + "?timeout=32s").andReturn(200, body).always();
  }

  private static APIGroup group(String name, String version) {
    return new APIGroupBuilder()
        .withName(name)
        .withVersions(
            new GroupVersionForDiscoveryBuilder()
                .withGroupVersion(name + "/" + version)
                .withVersion(version)
                .build())
        .withPreferredVersion(
            new GroupVersionForDiscoveryBuilder()
                .withGroupVersion(name + "/" + version)
                .withVersion(version)
                .build())
        .build();
  }

  private static String resources(String groupVersion, List<APIResource> resources) {
    return Serialization.asJson(
        new APIResourceListBuilder()
            .withGroupVersion(groupVersion)
            .withResources(resources)
            .build());
  }

  private static APIResource resource(
      String plural, String kind, boolean namespaced, List<String> shortNames) {
    return new APIResourceBuilder()
        .withName(plural)
        .withKind(kind)
        .withNamespaced(namespaced)
        .withShortNames(shortNames)
        .withSingularName("")
        .withVerbs("create", "delete", "get", "list", "patch", "update", "watch")
        .build();
  }
}
