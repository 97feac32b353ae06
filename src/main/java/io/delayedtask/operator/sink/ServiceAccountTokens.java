package io.delayedtask.operator.sink;

import io.delayedtask.operator.config.SinkConfig;
import io.fabric8.kubernetes.api.model.authentication.TokenRequest;
import io.fabric8.kubernetes.api.model.authentication.TokenRequestBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Tokens of the namespace's sender ServiceAccount ({@code DELAYEDTASK_SINK_SERVICE_ACCOUNT}) for
 * exactly a sink's audience, from the TokenRequest API (Knative's token provider): asked for once,
 * reused until 80% of its lifetime has passed. The operator's own token never leaves the process;
 * tokens are never logged.
 */
public final class ServiceAccountTokens {
  static final long LIFETIME_SECONDS = 3600;

  private final KubernetesClient client;
  private final SinkConfig config;
  private final Clock clock;
  private final Map<Key, Cached> cache = new ConcurrentHashMap<>();

  private record Key(String namespace, String audience) {}

  private record Cached(String token, Instant refreshAfter) {}

  public ServiceAccountTokens(KubernetesClient client, SinkConfig config, Clock clock) {
    this.client = client;
    this.config = config;
    this.clock = clock;
  }

  /** A token for {@code audience}; throws {@link MissingServiceAccountException} when the namespace has no sender. */
  public String tokenFor(String namespace, String audience) {
    Key key = new Key(namespace, audience);
    Cached cached = cache.get(key);
    Instant now = clock.instant();
    if (cached != null && now.isBefore(cached.refreshAfter())) {
      return cached.token();
    }
    TokenRequest request = new TokenRequestBuilder().withNewSpec()
        .withAudiences(audience).withExpirationSeconds(LIFETIME_SECONDS).endSpec().build();
    TokenRequest answer;
    try {
      answer = client.serviceAccounts().inNamespace(namespace).withName(config.serviceAccount()).tokenRequest(request);
    } catch (KubernetesClientException e) {
      if (e.getCode() == 404) {
        throw new MissingServiceAccountException("ServiceAccount " + config.serviceAccount() + " does not exist in "
            + "namespace " + namespace + ": create it to let tasks there send tokens (sink.audience " + audience + ")");
      }
      throw e;
    }
    Instant expires = answer.getStatus().getExpirationTimestamp() == null ? now.plusSeconds(LIFETIME_SECONDS)
        : Instant.parse(answer.getStatus().getExpirationTimestamp());
    Duration lifetime = Duration.between(now, expires);
    cache.put(key, new Cached(answer.getStatus().getToken(), now.plus(lifetime.multipliedBy(8).dividedBy(10))));
    return answer.getStatus().getToken();
  }
}
