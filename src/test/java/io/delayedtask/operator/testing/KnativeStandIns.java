package io.delayedtask.operator.testing;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * Stand-ins for Knative's Addressables on a real API server: a CRD of the same group, kind and
 * plural as Knative's (Serving's {@code Service}, Eventing's {@code Broker}), any spec, a status
 * subresource; and the object's {@code status.address.url}, written as Knative's controllers would.
 * Apply the CRD with {@link RealKubernetes#applyCrd}.
 */
public final class KnativeStandIns {
  private KnativeStandIns() {}

  /** The stand-in CRD, written to a file in {@code dir}. */
  public static Path crd(Path dir, String group, String kind, String plural, String shortName)
      throws IOException {
    Path file = dir.resolve(plural + "." + group + ".yaml");
    Files.writeString(
        file,
        """
        apiVersion: apiextensions.k8s.io/v1
        kind: CustomResourceDefinition
        metadata:
          name: %s.%s
        spec:
          group: %s
          names: {kind: %s, plural: %s, singular: %s, shortNames: [%s]}
          scope: Namespaced
          versions:
            - name: v1
              served: true
              storage: true
              subresources: {status: {}}
              schema:
                openAPIV3Schema:
                  type: object
                  x-kubernetes-preserve-unknown-fields: true
        """
            .formatted(plural, group, group, kind, plural, kind.toLowerCase(), shortName));
    return file;
  }

  /** Creates the object (once), then writes its status.address.url (null: none yet). */
  public static void address(
      KubernetesClient admin,
      String namespace,
      String apiVersion,
      String kind,
      String name,
      String url) {
    var resources = admin.genericKubernetesResources(apiVersion, kind).inNamespace(namespace);
    GenericKubernetesResource existing = resources.withName(name).get();
    if (existing == null) {
      existing =
          resources
              .resource(
                  new GenericKubernetesResourceBuilder()
                      .withApiVersion(apiVersion)
                      .withKind(kind)
                      .withNewMetadata()
                      .withName(name)
                      .endMetadata()
                      .build())
              .create();
    }
    existing.setAdditionalProperty(
        "status",
        url == null ? Map.of("observedGeneration", 1) : Map.of("address", Map.of("url", url)));
    resources.resource(existing).updateStatus();
  }
}
