package io.delayedtask.operator.sink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.delayedtask.operator.testing.RealKubernetes;
import io.delayedtask.operator.testing.RequiresRealKubernetes;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.api.model.authentication.TokenReview;
import io.fabric8.kubernetes.api.model.authentication.TokenReviewBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Tokens from the real TokenRequest API, checked by the real TokenReview API, as a receiver checks
 * them.
 */
@RequiresRealKubernetes
class ServiceAccountTokensIT {
  private static final String SENDER = "delayedtask-sender";

  private static KubernetesClient client;
  private static String namespace;
  private static String otherNamespace;

  /**
   * A clock the test moves: the API server's own clock decides the token's expiry, this one when to
   * renew.
   */
  private static final class MovableClock extends Clock {
    private volatile Instant now = Instant.now();

    void advance(Duration by) {
      now = now.plus(by);
    }

    @Override
    public Instant instant() {
      return now;
    }

    @Override
    public ZoneId getZone() {
      return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
      throw new UnsupportedOperationException();
    }
  }

  @BeforeAll
  static void start() {
    RealKubernetes kube = RealKubernetes.shared();
    client = kube.client();
    namespace = kube.createNamespace("sink-tokens");
    otherNamespace = kube.createNamespace("sink-tokens-other");
    for (String ns : new String[] {namespace, otherNamespace}) {
      client
          .serviceAccounts()
          .inNamespace(ns)
          .resource(
              new ServiceAccountBuilder().withNewMetadata().withName(SENDER).endMetadata().build())
          .create();
    }
  }

  private static TokenReview review(String token, String audience) {
    return client
        .authentication()
        .v1()
        .tokenReviews()
        .create(
            new TokenReviewBuilder()
                .withNewSpec()
                .withToken(token)
                .withAudiences(audience)
                .endSpec()
                .build());
  }

  @Test
  void aTokenOfTheSendersServiceAccountForExactlyThatAudience() {
    ServiceAccountTokens tokens = new ServiceAccountTokens(client, SENDER, Clock.systemUTC());

    String token = tokens.tokenFor(namespace, "orders");

    TokenReview forOrders = review(token, "orders");
    assertThat(forOrders.getStatus().getAuthenticated()).isTrue();
    assertThat(forOrders.getStatus().getUser().getUsername())
        .isEqualTo("system:serviceaccount:" + namespace + ":" + SENDER);
    assertThat(forOrders.getStatus().getAudiences()).containsExactly("orders");
    // A receiver with another audience does not accept it.
    assertThat(review(token, "payments").getStatus().getAuthenticated()).isNotEqualTo(Boolean.TRUE);
  }

  @Test
  void keepsATokenUntilFourFifthsOfItsLifetime() {
    MovableClock clock = new MovableClock();
    ServiceAccountTokens tokens = new ServiceAccountTokens(client, SENDER, clock);

    String first = tokens.tokenFor(namespace, "kept");
    clock.advance(Duration.ofMinutes(47)); // 78% of the hour asked for
    String stillKept = tokens.tokenFor(namespace, "kept");
    clock.advance(Duration.ofMinutes(2)); // 82%
    String renewed = tokens.tokenFor(namespace, "kept");

    assertThat(stillKept).isSameAs(first);
    assertThat(renewed).isNotEqualTo(first); // each TokenRequest answer carries its own jti
    assertThat(review(renewed, "kept").getStatus().getAuthenticated()).isTrue();
  }

  @Test
  void eachAudienceAndNamespaceHasItsOwnToken() {
    ServiceAccountTokens tokens = new ServiceAccountTokens(client, SENDER, Clock.systemUTC());
    assertThat(tokens.tokenFor(namespace, "a")).isNotEqualTo(tokens.tokenFor(namespace, "b"));
  }

  @Test
  void aNamespacesTokenIsNeverUsedForAnotherNamespaceWithTheSameAudience() {
    ServiceAccountTokens tokens = new ServiceAccountTokens(client, SENDER, Clock.systemUTC());

    String first = tokens.tokenFor(namespace, "shared-audience");
    String other = tokens.tokenFor(otherNamespace, "shared-audience");
    String firstAgain = tokens.tokenFor(namespace, "shared-audience");

    assertThat(other).isNotEqualTo(first);
    assertThat(firstAgain).as("kept per namespace and audience").isSameAs(first);
    assertThat(review(first, "shared-audience").getStatus().getUser().getUsername())
        .isEqualTo("system:serviceaccount:" + namespace + ":" + SENDER);
    assertThat(review(other, "shared-audience").getStatus().getUser().getUsername())
        .as("the TokenReview a receiver in the other namespace makes names that namespace's sender")
        .isEqualTo("system:serviceaccount:" + otherNamespace + ":" + SENDER);
  }

  @Test
  void aMissingServiceAccountSaysWhichToCreate() {
    ServiceAccountTokens tokens =
        new ServiceAccountTokens(client, "nobody-made-me", Clock.systemUTC());
    assertThatThrownBy(() -> tokens.tokenFor(namespace, "orders"))
        .isInstanceOf(MissingServiceAccountException.class)
        .hasMessage(
            "ServiceAccount nobody-made-me does not exist in namespace "
                + namespace
                + ": create it to let tasks there send tokens (sink.audience orders)");
  }
}
