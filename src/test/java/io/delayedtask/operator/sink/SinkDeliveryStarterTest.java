package io.delayedtask.operator.sink;

import static org.assertj.core.api.Assertions.assertThat;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.Destination;
import io.delayedtask.operator.config.SinkConfig;
import io.delayedtask.operator.schedule.ClaimedEntry;
import io.delayedtask.operator.testing.Tasks;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * When an attempt ended, on the Redis clock: the time its retry (a backoff, a Retry-After) is
 * measured from. It must never be behind the Redis clock, or the retry comes early.
 */
class SinkDeliveryStarterTest {
  private static final Instant CLAIMED_AT = Instant.parse("2026-12-03T07:00:00Z");
  private static final Instant DUE = CLAIMED_AT.minusMillis(3);
  private static final Duration CLAIM_TO_RECONCILE = Duration.ofMillis(200);

  // Never used for a uri sink without an audience; the builder connects to nothing until asked.
  private final KubernetesClient unusedClient = new KubernetesClientBuilder().build();
  private final DeliveryOutcomes outcomes = new DeliveryOutcomes();

  @AfterEach
  void closeClient() {
    unusedClient.close();
  }

  @Test
  void theAttemptsEndIsMeasuredFromWhenTheClaimWasSentNotFromWhenTheReconcileBegan() {
    Sender answersAtOnce =
        new Sender() {
          @Override
          public CompletableFuture<DeliveryResult> send(
              io.delayedtask.operator.sink.DeliveryRequest request) {
            return CompletableFuture.completedFuture(
                new DeliveryResult.Answered(
                    Instant.now(), Duration.ofMillis(1), 503, Optional.of(Duration.ofSeconds(3))));
          }

          @Override
          public void close() {}
        };
    SinkConfig config =
        new SinkConfig(
            List.of("http://orders.example/"), "cluster.local", "delayedtask-sender", 8, 8);
    SinkDeliveryStarter starter =
        new SinkDeliveryStarter(
            answersAtOnce,
            new Destinations(new NoServices(), new Addressables(unusedClient), config),
            new ServiceAccountTokens(unusedClient, config),
            config,
            outcomes,
            lag -> {},
            Clock.systemUTC());
    DelayedTask task = uriSinkTask();
    // The claim left this process 200 ms before its reconcile began (a queue of reconciles ahead of
    // it).
    long sentNanos =
        System.nanoTime() - TimeUnit.MILLISECONDS.toNanos(CLAIM_TO_RECONCILE.toMillis());
    ClaimedEntry claim = new ClaimedEntry("ns/cancel-order", DUE, CLAIMED_AT, "op:0:1", sentNanos);

    starter.start(
        task,
        DUE,
        claim,
        new DeliveryAttempt(DeliveryOutcome.Target.SINK, 1, 1, Duration.ofSeconds(10), Map.of()));

    DeliveryOutcome outcome = outcomes.getSecondaryResources(task).iterator().next();
    assertThat(outcome.redisTimeAtEnd())
        .as(
            "the Redis clock at the answer is at least the claim's time plus the 200 ms since it was sent")
        .isAfterOrEqualTo(CLAIMED_AT.plus(CLAIM_TO_RECONCILE));
  }

  @Test
  void anAttemptThatCannotBeSignedIsNeverSentAndFailsNamingTheSecretAndTheFix() {
    List<DeliveryRequest> sent = new java.util.ArrayList<>();
    SinkConfig config =
        new SinkConfig(
            List.of("http://orders.example/"), "cluster.local", "delayedtask-sender", 8, 8);
    SinkDeliveryStarter starter =
        new SinkDeliveryStarter(
            recording(sent),
            new Destinations(new NoServices(), new Addressables(unusedClient), config),
            new ServiceAccountTokens(unusedClient, config),
            config,
            outcomes,
            lag -> {},
            Clock.systemUTC(),
            (namespace, key, field) -> {
              throw new io.delayedtask.operator.sink.signing.SigningSecretException(
                  "Secret delayedtask-signing does not exist in namespace "
                      + namespace
                      + " ("
                      + field
                      + " "
                      + key
                      + "): create it");
            });
    DelayedTask task = uriSinkTask();
    task.getSpec().getSink().setSigning(new io.delayedtask.operator.api.v1alpha1.Signing("orders"));
    ClaimedEntry claim =
        new ClaimedEntry("ns/cancel-order", DUE, CLAIMED_AT, "op:0:1", System.nanoTime());

    starter.start(
        task,
        DUE,
        claim,
        new DeliveryAttempt(DeliveryOutcome.Target.SINK, 1, 1, Duration.ofSeconds(10), Map.of()));

    assertThat(sent).as("nothing sent unsigned").isEmpty();
    DeliveryOutcome outcome = outcomes.getSecondaryResources(task).iterator().next();
    assertThat(outcome.result())
        .isInstanceOfSatisfying(
            DeliveryOutcome.Result.NotSent.class,
            notSent -> {
              assertThat(notSent.why())
                  .isEqualTo(
                      "not sent, it could not be signed: Secret delayedtask-signing does not "
                          + "exist in namespace ns (sink.signing.key orders): create it");
              assertThat(notSent.retryable())
                  .as("retried: the Secret may be fixed meanwhile")
                  .isTrue();
            });
  }

  @Test
  void aSignedSinkHandsItsKeysToTheSenderAndTheDeadLetterSinkItsOwn() {
    List<DeliveryRequest> sent = new java.util.ArrayList<>();
    List<String> askedFor = new java.util.ArrayList<>();
    SinkConfig config =
        new SinkConfig(
            List.of("http://orders.example/"), "cluster.local", "delayedtask-sender", 8, 8);
    Map<String, io.delayedtask.operator.sink.signing.SigningKeys> byKey =
        Map.of(
            "orders",
                io.delayedtask.operator.sink.signing.SigningKeys.parse(
                    "whsec_" + java.util.Base64.getEncoder().encodeToString(new byte[24]),
                    "w",
                    "f"),
            "dead",
                io.delayedtask.operator.sink.signing.SigningKeys.parse(
                    "whsec_"
                        + java.util.Base64.getEncoder().encodeToString(new byte[32])
                        + " whsec_"
                        + java.util.Base64.getEncoder().encodeToString(new byte[40]),
                    "w",
                    "f"));
    SinkDeliveryStarter starter =
        new SinkDeliveryStarter(
            recording(sent),
            new Destinations(new NoServices(), new Addressables(unusedClient), config),
            new ServiceAccountTokens(unusedClient, config),
            config,
            outcomes,
            lag -> {},
            Clock.systemUTC(),
            (namespace, key, field) -> {
              askedFor.add(field + " " + key);
              return byKey.get(key);
            });
    DelayedTask task = uriSinkTask();
    task.getSpec().getSink().setSigning(new io.delayedtask.operator.api.v1alpha1.Signing("orders"));
    Destination dead = new Destination();
    dead.setUri("http://orders.example/dead");
    dead.setSigning(new io.delayedtask.operator.api.v1alpha1.Signing("dead"));
    task.getSpec().setDelivery(new io.delayedtask.operator.api.v1alpha1.DeliverySpec());
    task.getSpec().getDelivery().setDeadLetterSink(dead);
    ClaimedEntry claim =
        new ClaimedEntry("ns/cancel-order", DUE, CLAIMED_AT, "op:0:1", System.nanoTime());

    starter.start(
        task,
        DUE,
        claim,
        new DeliveryAttempt(DeliveryOutcome.Target.SINK, 1, 1, Duration.ofSeconds(10), Map.of()));
    starter.start(
        task,
        DUE,
        claim,
        new DeliveryAttempt(
            DeliveryOutcome.Target.DEAD_LETTER_SINK,
            5,
            1,
            Duration.ofSeconds(10),
            Map.of("delayedtaskerrorcode", "0")));

    assertThat(sent).hasSize(2);
    assertThat(sent.get(0).signing()).containsSame(byKey.get("orders"));
    assertThat(sent.get(1).signing()).containsSame(byKey.get("dead"));
    assertThat(askedFor)
        .as("each message names the field")
        .containsExactly("sink.signing.key orders", "delivery.deadLetterSink.signing.key dead");
  }

  private static Sender recording(List<DeliveryRequest> sent) {
    return new Sender() {
      @Override
      public CompletableFuture<DeliveryResult> send(DeliveryRequest request) {
        sent.add(request);
        return CompletableFuture.completedFuture(
            new DeliveryResult.Answered(
                Instant.now(), Duration.ofMillis(1), 204, Optional.empty()));
      }

      @Override
      public void close() {}
    };
  }

  /** A uri sink reads no Service. */
  private static final class NoServices implements ServiceDirectory {
    @Override
    public boolean knows(String namespace) {
      return false;
    }

    @Override
    public Optional<Service> service(String namespace, String name) {
      return Optional.empty();
    }

    @Override
    public List<EndpointSlice> endpointSlices(String namespace, String service) {
      return List.of();
    }
  }

  private static DelayedTask uriSinkTask() {
    DelayedTask task =
        Tasks.task(
            "ns",
            "cancel-order",
            s -> {
              s.setRunAt(DUE.toString());
              Destination sink = new Destination();
              sink.setUri("http://orders.example/cancel");
              s.setSink(sink);
            });
    task.getMetadata().setUid("uid-1");
    return task;
  }
}
