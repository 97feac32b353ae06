package io.delayedtask.operator.sink;

import io.delayedtask.operator.config.SinkConfig;
import io.fabric8.kubernetes.api.model.authentication.TokenRequest;
import io.fabric8.kubernetes.api.model.authentication.TokenRequestBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Tokens for {@code sink.audience}: a TokenRequest for the ServiceAccount named by
 * DELAYEDTASK_SINK_SERVICE_ACCOUNT in the task's namespace, bound to exactly that audience, kept
 * and reused until 80% of its lifetime has passed (Knative's {@code pkg/auth/token_provider.go}
 * does the same). The operator's own token never leaves the process; tokens are never logged.
 *
 * <p>{@link #tokenFor} calls the API server when no fresh token is kept: call it where a blocking
 * call is acceptable.
 */
public final class ServiceAccountTokens {
  /**
   * What we ask for; the API server may grant less (or more, with
   * --service-account-extend-token-expiration).
   */
  static final long REQUESTED_SECONDS = 3600;

  private static final double REFRESH_AT = 0.8;

  private final KubernetesClient client;
  private final String serviceAccount;
  private final Clock clock;
  private final Map<Key, Token> tokens = new ConcurrentHashMap<>();
  private final Map<Key, Object> locks = new ConcurrentHashMap<>();

  public ServiceAccountTokens(KubernetesClient client, SinkConfig config) {
    this(client, config.serviceAccount(), Clock.systemUTC());
  }

  public ServiceAccountTokens(KubernetesClient client, String serviceAccount, Clock clock) {
    this.client = Objects.requireNonNull(client, "client");
    this.serviceAccount = Objects.requireNonNull(serviceAccount, "serviceAccount");
    this.clock = Objects.requireNonNull(clock, "clock");
  }

  private record Key(String namespace, String audience) {}

  /** A token and when to stop using it. Its toString never shows the token. */
  private record Token(String value, Instant refreshAfter, Instant expires) {
    @Override
    public String toString() {
      return "Token[refreshAfter=" + refreshAfter + ", expires=" + expires + "]";
    }
  }

  /**
   * A token of the ServiceAccount in {@code namespace} for {@code audience}.
   *
   * @throws MissingServiceAccountException when the ServiceAccount does not exist there
   * @throws KubernetesClientException when the API server refuses or cannot be reached (retry
   *     later)
   */
  public String tokenFor(String namespace, String audience) {
    Key key = new Key(namespace, audience);
    Token kept = tokens.get(key);
    if (kept != null && clock.instant().isBefore(kept.refreshAfter())) {
      return kept.value();
    }
    // One request per destination at a time; others wait for its token instead of asking again.
    synchronized (locks.computeIfAbsent(key, k -> new Object())) {
      kept = tokens.get(key);
      Instant now = clock.instant();
      if (kept != null && now.isBefore(kept.refreshAfter())) {
        return kept.value();
      }
      Token fresh = request(key, now);
      tokens.put(key, fresh);
      forgetExpired(now);
      return fresh.value();
    }
  }

  private Token request(Key key, Instant now) {
    TokenRequest asked =
        new TokenRequestBuilder()
            .withNewSpec()
            .withAudiences(key.audience())
            .withExpirationSeconds(REQUESTED_SECONDS)
            .endSpec()
            .build();
    TokenRequest granted;
    try {
      granted =
          client
              .serviceAccounts()
              .inNamespace(key.namespace())
              .withName(serviceAccount)
              .tokenRequest(asked);
    } catch (KubernetesClientException e) {
      if (e.getCode() == 404) {
        throw new MissingServiceAccountException(serviceAccount, key.namespace(), key.audience());
      }
      throw e;
    }
    Instant expires = expiry(granted, now);
    Duration lifetime = Duration.between(now, expires);
    Instant refreshAfter = now.plusMillis((long) (lifetime.toMillis() * REFRESH_AT));
    return new Token(granted.getStatus().getToken(), refreshAfter, expires);
  }

  /** The granted expiry; the requested one when the answer lacks it. */
  private static Instant expiry(TokenRequest granted, Instant now) {
    String timestamp = granted.getStatus().getExpirationTimestamp();
    if (timestamp != null) {
      try {
        return Instant.parse(timestamp);
      } catch (DateTimeParseException ignored) {
        // fall back to what was asked for
      }
    }
    return now.plusSeconds(REQUESTED_SECONDS);
  }

  /** Tokens of namespaces or audiences no longer used must not pile up. */
  private void forgetExpired(Instant now) {
    tokens
        .entrySet()
        .removeIf(
            entry -> {
              boolean expired = !now.isBefore(entry.getValue().expires());
              if (expired) {
                locks.remove(entry.getKey());
              }
              return expired;
            });
  }
}
