package io.delayedtask.operator.sink.signing;

import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The signing Secrets of the watched namespaces, learned by informers that list and watch Secrets
 * of that one name only (a field selector {@code metadata.name=<name>}, so RBAC can grant list and
 * watch with {@code resourceNames}): a changed Secret is used as soon as its watch event arrives,
 * and no attempt sends a request. All namespaces: one informer; named namespaces: one each (the
 * chart's watchNamespaces install grants Roles there only). The parsed secrets are kept per
 * namespace, key and resourceVersion, so an attempt does not decode them again.
 */
public final class InformedSigningSecrets implements SigningSecrets, AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(InformedSigningSecrets.class);

  private final String name;
  private final Map<String, SharedIndexInformer<Secret>> byNamespace = new HashMap<>();
  private final SharedIndexInformer<Secret> allNamespaces;
  private final Map<Parsed, SigningKeys> parsed = new ConcurrentHashMap<>();

  private record Parsed(String namespace, String key, String resourceVersion) {}

  /**
   * Starts the informers (returns at once; they list in the background).
   *
   * @param name the Secret's name (DELAYEDTASK_SINK_SIGNING_SECRET)
   * @param namespaces the namespaces to watch; empty: all
   */
  public InformedSigningSecrets(KubernetesClient client, String name, Set<String> namespaces) {
    this.name = Objects.requireNonNull(name, "name");
    if (namespaces.isEmpty()) {
      allNamespaces =
          start(
              client
                  .secrets()
                  .inAnyNamespace()
                  .withField("metadata.name", name)
                  .runnableInformer(0));
    } else {
      allNamespaces = null;
      for (String namespace : namespaces) {
        byNamespace.put(
            namespace,
            start(
                client
                    .secrets()
                    .inNamespace(namespace)
                    .withField("metadata.name", name)
                    .runnableInformer(0)));
      }
    }
  }

  private static SharedIndexInformer<Secret> start(SharedIndexInformer<Secret> informer) {
    informer.exceptionHandler(
        (started, error) -> {
          // The exception is the client's (an HTTP status, a connection failure), never a Secret's
          // value.
          LOG.warn(
              "Listing or watching the signing Secrets failed, retrying: {}",
              error.getClass().getSimpleName()
                  + (error.getMessage() == null ? "" : ": " + error.getMessage()));
          return true;
        });
    informer.start();
    return informer;
  }

  @Override
  public SigningKeys keysFor(String namespace, String key, String field) {
    String where =
        "key " + key + " of Secret " + name + " in namespace " + namespace + " (" + field + ")";
    String fix =
        "write a Standard Webhooks secret there, such as: kubectl -n "
            + namespace
            + " create secret generic "
            + name
            + " --from-literal="
            + key
            + "=whsec_$(openssl rand -base64 32)";
    SharedIndexInformer<Secret> informer =
        Optional.ofNullable(allNamespaces).orElse(byNamespace.get(namespace));
    if (informer == null) {
      throw new SigningSecretException(
          "namespace "
              + namespace
              + " is not one the operator watches, so it reads no "
              + "Secret "
              + name
              + " there");
    }
    if (!informer.hasSynced()) {
      throw new SigningSecretException(
          "the operator has not listed the Secrets named "
              + name
              + " yet (it may not "
              + "list them: its RBAC grants list and watch on Secrets of that name); the attempt is retried");
    }
    Secret secret = informer.getStore().getByKey(namespace + "/" + name);
    if (secret == null) {
      throw new SigningSecretException(
          "Secret "
              + name
              + " does not exist in namespace "
              + namespace
              + ", and "
              + field
              + " "
              + key
              + " names a key of it: create it, such as: kubectl -n "
              + namespace
              + " create secret generic "
              + name
              + " --from-literal="
              + key
              + "=whsec_$(openssl rand -base64 32)");
    }
    Map<String, String> data = secret.getData();
    String encoded = data == null ? null : data.get(key);
    if (encoded == null) {
      throw new SigningSecretException(
          "Secret "
              + name
              + " in namespace "
              + namespace
              + " has no key "
              + key
              + " ("
              + field
              + "): add it, such as: kubectl -n "
              + namespace
              + " patch secret "
              + name
              + " --type merge -p '{\"stringData\":{\""
              + key
              + "\":\"whsec_<base64 of 24 to 64 random bytes>\"}}'");
    }
    Parsed id =
        new Parsed(namespace, key, String.valueOf(secret.getMetadata().getResourceVersion()));
    SigningKeys kept = parsed.get(id);
    if (kept != null) {
      return kept;
    }
    String value;
    try {
      value = new String(Base64.getDecoder().decode(encoded), StandardCharsets.UTF_8);
    } catch (IllegalArgumentException e) {
      throw new SigningSecretException(where + " is not base64 in the Secret's data; " + fix);
    }
    SigningKeys keys = SigningKeys.parse(value, where, fix);
    // Older versions of this Secret's keys are no longer used.
    parsed.keySet().removeIf(p -> p.namespace().equals(namespace) && p.key().equals(key));
    parsed.put(id, keys);
    return keys;
  }

  @Override
  public void close() {
    if (allNamespaces != null) {
      allNamespaces.close();
    }
    byNamespace.values().forEach(SharedIndexInformer::close);
  }
}
