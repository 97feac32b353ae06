package io.delayedtask.operator;

import io.delayedtask.operator.config.OperatorConfig;
import io.delayedtask.operator.sink.Addressables;
import io.delayedtask.operator.sink.DeliveryOutcomes;
import io.delayedtask.operator.sink.DeliveryStarter;
import io.delayedtask.operator.sink.Destinations;
import io.delayedtask.operator.sink.InformedServices;
import io.delayedtask.operator.sink.OkHttpSender;
import io.delayedtask.operator.sink.ServiceAccountTokens;
import io.delayedtask.operator.sink.SinkDeliveryStarter;
import io.delayedtask.operator.sink.SinkSpecRules;
import io.delayedtask.operator.sink.signing.InformedSigningSecrets;
import io.delayedtask.operator.trace.Tracing;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.function.Consumer;

/**
 * Builds a sink task's delivery (implemented in sink/), in two steps, because validating a task's
 * sink is needed before its delivery can be: {@link #of} makes what a spec's sink is checked
 * against (which kinds are Addressables) and where delivery outcomes arrive; {@link
 * #deliveryStarter} the sender and what it reads at each attempt. What must be stopped is handed to
 * {@code toStop} as it is made, so the process stops it in reverse.
 */
final class SinkWiring {
  private final OperatorConfig config;
  private final KubernetesClient client;
  private final Consumer<AutoCloseable> toStop;
  private final Addressables addressables;
  private final DeliveryOutcomes outcomes = new DeliveryOutcomes();

  private SinkWiring(
      OperatorConfig config, KubernetesClient client, Consumer<AutoCloseable> toStop) {
    this.config = config;
    this.client = client;
    this.toStop = toStop;
    // A sink.ref to a Knative Addressable: which kinds are (asked off the reconcile threads), and
    // an
    // informer per such kind, started when a task first names it.
    this.addressables = new Addressables(client);
    toStop.accept(addressables);
  }

  /** The first step: what a sink is validated against; nothing is sent yet. */
  static SinkWiring of(
      OperatorConfig config, KubernetesClient client, Consumer<AutoCloseable> toStop) {
    return new SinkWiring(config, client, toStop);
  }

  /** The spec's sink rules (allowlist, ref kinds, CloudEvent fields) for the SpecValidator. */
  SinkSpecRules specRules() {
    return new SinkSpecRules(config.sink(), addressables);
  }

  /** Where delivery attempts report their outcomes: an event source of the reconciler. */
  DeliveryOutcomes outcomes() {
    return outcomes;
  }

  /**
   * The second step: sink deliveries, sent without a reconcile thread waiting, their answers back
   * through {@link #outcomes()} as events.
   *
   * @param firstAttemptLag where a first attempt's lag goes (the reconciler's fire-lag histogram)
   */
  DeliveryStarter deliveryStarter(
      DelayedTaskOperator.Options options,
      MeterRegistry registry,
      Consumer<Duration> firstAttemptLag,
      Tracing tracing) {
    Clock clock = options.clock();
    OkHttpSender sender =
        new OkHttpSender(
            config.sink(), registry, options.sinkResolver(), options.sinkSockets(), clock);
    toStop.accept(sender);
    // A sink.ref's Service and EndpointSlices come from informers: no request per delivery.
    InformedServices services = new InformedServices(client, config.namespaces());
    toStop.accept(services);
    // sink.signing's secrets: an informer on the one Secret name, no request per attempt.
    InformedSigningSecrets signingSecrets =
        new InformedSigningSecrets(client, config.sink().signingSecret(), config.namespaces());
    toStop.accept(signingSecrets);
    return new SinkDeliveryStarter(
        sender,
        new Destinations(services, addressables, config.sink()),
        new ServiceAccountTokens(client, config.sink()),
        config.sink(),
        outcomes,
        firstAttemptLag,
        clock,
        signingSecrets,
        tracing);
  }
}
