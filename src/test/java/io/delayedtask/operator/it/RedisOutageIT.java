package io.delayedtask.operator.it;

import static io.delayedtask.operator.testing.Tasks.create;
import static io.delayedtask.operator.testing.Tasks.get;
import static io.delayedtask.operator.testing.Tasks.phase;
import static io.delayedtask.operator.testing.Tasks.task;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.delayedtask.operator.DelayedTaskOperator;
import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.Phase;
import io.delayedtask.operator.config.OperatorConfig;
import io.delayedtask.operator.testing.OperatorFixture;
import io.delayedtask.operator.testing.RealKubernetes;
import io.delayedtask.operator.testing.RedisProcess;
import io.delayedtask.operator.testing.RequiresRealKubernetes;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/**
 * Redis is an index: while it is down the operator is not ready, keeps deleted tasks' finalizers
 * and still accepts new tasks; when it comes back empty, the schedule is rebuilt and nothing is lost.
 * On a real API server, which keeps a deleted object with a finalizer until the finalizer goes.
 */
@RequiresRealKubernetes
class RedisOutageIT {
  private static final Duration TIMEOUT = Duration.ofSeconds(30);

  @Test
  void anEmptyRedisAfterAnOutageLosesNoTask() {
    RealKubernetes kube = RealKubernetes.shared();
    String ns = kube.createNamespace("outage");
    try (RedisProcess redis = RedisProcess.start(); KubernetesClient operatorClient = kube.newClient()) {
      KubernetesClient client = kube.client();
      // Resync only every 5 minutes: what heals the schedule here is noticing the restarted Redis.
      var env = OperatorFixture.env(redis, "outage", "op");
      env.put(OperatorConfig.NAMESPACES, ns);
      env.put(OperatorConfig.LEASE_NAMESPACE, ns);
      env.put("DELAYEDTASK_RESYNC_SECONDS", "300");
      try (DelayedTaskOperator operator = OperatorFixture.start(env, operatorClient)) {
        create(client, task(ns, "doomed", s -> s.setRunAt(Instant.now().plusSeconds(3600).toString())));
        await().atMost(TIMEOUT).until(() -> phase(client, ns, "doomed").orElse(null) == Phase.Scheduled);
        await().atMost(TIMEOUT).until(() -> status(operator, "/readyz") == 200);

        redis.kill();
        await().atMost(TIMEOUT).until(() -> status(operator, "/readyz") == 503);

        // Deleting while Redis is down keeps the finalizer: the entry cannot be removed yet.
        DelayedTask doomed = get(client, ns, "doomed");
        client.resource(doomed).delete();
        await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(5)).until(() -> {
          DelayedTask still = get(client, ns, "doomed");
          return still != null && still.getMetadata().getDeletionTimestamp() != null;
        });
        // A task created during the outage is accepted and reported Scheduled from its spec.
        Instant due = Instant.now().plusSeconds(3);
        create(client, task(ns, "patient", s -> s.setRunAt(due.toString())));
        await().atMost(TIMEOUT).until(() -> phase(client, ns, "patient").orElse(null) == Phase.Scheduled);

        redis.restart();
        await().atMost(TIMEOUT).until(() -> status(operator, "/readyz") == 200);
        await().atMost(TIMEOUT).until(() -> phase(client, ns, "patient").orElse(null) == Phase.Fired);
        assertThat(Instant.parse(get(client, ns, "patient").getStatus().getFiredTime())).isAfterOrEqualTo(
            Instant.parse(get(client, ns, "patient").getStatus().getDueTime()));
        await().atMost(TIMEOUT).until(() -> get(client, ns, "doomed") == null);
      }
    }
  }

  private static int status(DelayedTaskOperator operator, String path) {
    try {
      return HttpClient.newHttpClient().send(
          HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + operator.httpPort() + path)).build(),
          HttpResponse.BodyHandlers.discarding()).statusCode();
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }
}
