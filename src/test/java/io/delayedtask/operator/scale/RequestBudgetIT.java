package io.delayedtask.operator.scale;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.DelayedTaskStatus;
import io.delayedtask.operator.api.v1alpha1.Destination;
import io.delayedtask.operator.api.v1alpha1.Phase;
import io.delayedtask.operator.api.v1alpha1.ServiceReference;
import io.delayedtask.operator.config.SinkConfig;
import io.delayedtask.operator.testing.JobOutcomes;
import io.delayedtask.operator.testing.KnativeStandIns;
import io.delayedtask.operator.testing.OperatorProcess;
import io.delayedtask.operator.testing.Ports;
import io.delayedtask.operator.testing.Receiver;
import io.delayedtask.operator.testing.RequiresLoopbackOnlyNetwork;
import io.delayedtask.operator.testing.RequiresRealKubernetes;
import io.delayedtask.operator.testing.Tasks;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.IntFunction;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a task costs the API server, counted from a real kube-apiserver's audit log by the
 * operator's own identity (the jar, as a ServiceAccount): a status-only task from creation to
 * {@code Fired} at most 4 requests, a Job task to {@code Succeeded} at most 8 (the dry run of its
 * Job when it is scheduled is the eighth), a sink task delivered on its first attempt to {@code
 * Succeeded} at most 4 for a {@code uri} (signed or not), at most 5 for a {@code ref} to a Knative
 * Addressable (a stand-in Broker, {@code testing/KnativeStandIns}, whose {@code status.address.url}
 * the operator reads from an informer of its kind), and none reads a task or a Job (decisions come
 * from the informer caches; there is no finalizer to add). The figures with their breakdown, and
 * the same on the mock, come from {@code scale/RequestsAndThroughput}
 * (docs/development/scale-lab.md).
 *
 * <p>Counted are the requests about the tasks themselves; the informers' own list and watch calls
 * (a watch is re-opened every few minutes, whatever the tasks do) and the leader election's Lease
 * traffic are left out and shown apart.
 */
@RequiresRealKubernetes
@RequiresLoopbackOnlyNetwork
class RequestBudgetIT {
  private static final String NS = OperatorScaleLab.NAMESPACE;
  private static final int TASKS = 5;
  private static final Duration TIMEOUT = Duration.ofSeconds(60);

  /** How long after the last task reached its phase the operator's requests still count. */
  private static final Duration TRAILING = Duration.ofSeconds(3);

  @Test
  void aTaskCostsAtMostFourRequestsToFiredAJobTaskEightASinkTaskFourAnAddressableFiveAndNoneReadsIt(
      @TempDir Path dir) throws Exception {
    try (OperatorScaleLab lab = new OperatorScaleLab(ScaleTarget.start("real"));
        Receiver receiver = Receiver.start()) {
      ((RealTarget) lab.target)
          .applyCrd(KnativeStandIns.crd(dir, "eventing.knative.dev", "Broker", "brokers", "bkr"));
      KnativeStandIns.address(
          lab.client(),
          NS,
          "eventing.knative.dev/v1",
          "Broker",
          "default",
          receiver.base() + "/budget-broker");
      int port = Ports.freePort();
      try (OperatorProcess operator =
          lab.startOperator(
              "budget-op",
              port,
              OperatorProcess.jar(),
              Map.of(SinkConfig.ALLOWED_URIS, receiver.base()))) {
        await("the operator is ready").atMost(TIMEOUT).until(() -> lab.ready(port));

        Map<String, Long> statusOnly =
            requestsUntil(
                lab, "s", i -> Tasks.statusOnly(NS, "s-" + i, dueSoon()), Phase.Fired, "Fired");
        assertThat(statusOnly.keySet())
            .as("no GET of a task, found or not")
            .noneMatch(RequestBudgetIT::readsATaskOrJob);
        assertThat(perTask(statusOnly))
            .as("requests per status-only task: %s", statusOnly)
            .isLessThanOrEqualTo(4.0);

        Map<String, Long> withJob =
            requestsUntil(
                lab,
                "j",
                i -> Tasks.withJob(NS, "j-" + i, dueSoon()),
                Phase.Succeeded,
                "Succeeded");
        assertThat(withJob.keySet())
            .as("no GET of a task or a Job, found or not")
            .noneMatch(RequestBudgetIT::readsATaskOrJob);
        assertThat(perTask(withJob))
            .as("requests per Job task: %s", withJob)
            .isLessThanOrEqualTo(8.0);

        Map<String, Long> sink =
            requestsUntil(
                lab,
                "d",
                i ->
                    Tasks.task(
                        NS,
                        "d-" + i,
                        s -> {
                          s.setRunAt(Tasks.rfc3339(dueSoon()));
                          Destination destination = new Destination();
                          destination.setUri(receiver.base() + "/budget");
                          s.setSink(destination);
                        }),
                Phase.Succeeded,
                "Delivered");
        assertThat(receiver.requestsTo("/budget"))
            .as("delivered on the first attempt")
            .hasSize(TASKS);
        assertThat(sink.keySet())
            .as("no GET of a task, found or not")
            .noneMatch(RequestBudgetIT::readsATaskOrJob);
        assertThat(perTask(sink)).as("requests per sink task: %s", sink).isLessThanOrEqualTo(4.0);

        // Signed: the secret comes from the signing Secret's informer (its list and watch left out
        // like every informer's), never with a request per attempt.
        lab.client()
            .secrets()
            .inNamespace(NS)
            .resource(
                new io.fabric8.kubernetes.api.model.SecretBuilder()
                    .withNewMetadata()
                    .withName(SinkConfig.DEFAULT_SIGNING_SECRET)
                    .endMetadata()
                    .withStringData(Map.of("budget", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"))
                    .build())
            .create();
        Map<String, Long> signed =
            requestsUntil(
                lab,
                "g",
                i ->
                    Tasks.task(
                        NS,
                        "g-" + i,
                        s -> {
                          s.setRunAt(Tasks.rfc3339(dueSoon()));
                          Destination destination = new Destination();
                          destination.setUri(receiver.base() + "/budget-signed");
                          destination.setSigning(
                              new io.delayedtask.operator.api.v1alpha1.Signing("budget"));
                          s.setSink(destination);
                        }),
                Phase.Succeeded,
                "Delivered");
        assertThat(receiver.requestsTo("/budget-signed"))
            .as("delivered signed on the first attempt")
            .hasSize(TASKS)
            .allSatisfy(r -> assertThat(r.header("webhook-signature")).startsWith("v1,"));
        assertThat(signed.keySet())
            .as("no read of the Secret per attempt")
            .noneMatch(k -> k.contains("secrets"));
        assertThat(perTask(signed))
            .as("requests per signed sink task: %s", signed)
            .isLessThanOrEqualTo(4.0);

        // The first task to name the kind starts its informer (a list and a watch, left out like
        // every
        // informer's); every attempt then reads the address from its cache, with no request.
        // Whether
        // the kind is an Addressable is asked once per kind (discovery and an access review, off
        // the
        // reconcile threads): a task of the first minute, before that answer, waits for it. That
        // one-time cost of a kind is paid here, before the count, by a task of its own.
        lab.client()
            .resource(
                Tasks.task(
                    NS,
                    "kind-first",
                    s -> {
                      s.setRunAt(Tasks.rfc3339(dueSoon()));
                      Destination destination = new Destination();
                      destination.setRef(
                          new ServiceReference("eventing.knative.dev/v1", "Broker", "default"));
                      s.setSink(destination);
                    }))
            .create();
        await("the first task naming the Broker kind is delivered")
            .atMost(TIMEOUT)
            .until(
                () ->
                    Optional.ofNullable(
                                lab.client()
                                    .resources(DelayedTask.class)
                                    .inNamespace(NS)
                                    .withName("kind-first")
                                    .get()
                                    .getStatus())
                            .map(DelayedTaskStatus::getPhase)
                            .orElse(null)
                        == Phase.Succeeded);
        Map<String, Long> addressable =
            requestsUntil(
                lab,
                "a",
                i ->
                    Tasks.task(
                        NS,
                        "a-" + i,
                        s -> {
                          s.setRunAt(Tasks.rfc3339(dueSoon()));
                          Destination destination = new Destination();
                          destination.setRef(
                              new ServiceReference("eventing.knative.dev/v1", "Broker", "default"));
                          s.setSink(destination);
                        }),
                Phase.Succeeded,
                "Delivered");
        assertThat(receiver.requestsTo("/budget-broker"))
            .as("delivered on the first attempt")
            .hasSize(TASKS + 1);
        assertThat(addressable.keySet())
            .as("no GET of a task, found or not")
            .noneMatch(RequestBudgetIT::readsATaskOrJob);
        assertThat(addressable.keySet())
            .as("no GET of the Broker per attempt")
            .noneMatch(k -> k.startsWith("get brokers"));
        assertThat(perTask(addressable))
            .as("requests per Addressable sink task: %s", addressable)
            .isLessThanOrEqualTo(5.0);

        refsToBuiltInKindsStartNoInformer(lab);
      }
    }
  }

  /**
   * Finding 4 of issue 32: a {@code sink.ref} naming the operator's own kind, a Job or an
   * EndpointSlice is {@code Invalid} and starts no informer. The operator lists and watches these
   * kinds for itself from its start, so any list of them while the tasks are written and fall due
   * would be an informer a task started; nor is the API server asked about those kinds (discovery).
   */
  private static void refsToBuiltInKindsStartNoInformer(OperatorScaleLab lab) {
    Instant from = Instant.now();
    Instant due = from.plusSeconds(2);
    List<ServiceReference> refs =
        List.of(
            new ServiceReference("delayedtask.io/v1alpha1", "DelayedTask", "s-0"),
            new ServiceReference("batch/v1", "Job", "j-0"),
            new ServiceReference("discovery.k8s.io/v1", "EndpointSlice", "kubernetes"));
    for (int i = 0; i < refs.size(); i++) {
      ServiceReference ref = refs.get(i);
      lab.client()
          .resource(
              Tasks.task(
                  NS,
                  "k-" + i,
                  s -> {
                    s.setRunAt(Tasks.rfc3339(due));
                    Destination destination = new Destination();
                    destination.setRef(ref);
                    s.setSink(destination);
                  }))
          .create();
    }
    // Past the due time, so a task let through would have been attempted (and its kind's informer
    // started).
    Instant to = due.plus(TRAILING);
    await("the trailing " + TRAILING + " past the due time")
        .atMost(TRAILING.plusSeconds(10))
        .pollInterval(Duration.ofMillis(100))
        .until(() -> Instant.now().isAfter(to.plusSeconds(1)));
    Map<String, Long> requests = lab.target.operatorRequests(from, to);
    System.out.printf(
        "k-*: refs to DelayedTask, Job, EndpointSlice; the operator's requests %s%n", requests);
    assertThat(requests.keySet())
        .as("no list of a kind a task named: %s", requests)
        .noneMatch(
            k ->
                k.startsWith("list delayedtasks")
                    || k.startsWith("list jobs")
                    || k.startsWith("list endpointslices"));
    assertThat(requests.keySet())
        .as("no discovery of a kind a task named: %s", requests)
        .noneMatch(
            k ->
                k.startsWith("get /apis/delayedtask.io")
                    || k.startsWith("get /apis/batch")
                    || k.startsWith("get /apis/discovery.k8s.io"));
    for (int i = 0; i < refs.size(); i++) {
      String name = "k-" + i;
      String kind = refs.get(i).getKind();
      await(name + " Invalid, naming " + kind)
          .atMost(TIMEOUT)
          .until(
              () ->
                  Optional.ofNullable(
                          lab.client()
                              .resources(DelayedTask.class)
                              .inNamespace(NS)
                              .withName(name)
                              .get()
                              .getStatus())
                      .filter(status -> status.getPhase() == Phase.Invalid)
                      .filter(
                          status ->
                              status.getMessage() != null && status.getMessage().contains(kind))
                      .isPresent());
    }
  }

  /**
   * "get delayedtasks", "get delayedtasks 404", "get jobs/status", ...: any read of one task or
   * Job.
   */
  private static boolean readsATaskOrJob(String kind) {
    return kind.startsWith("get delayedtasks") || kind.startsWith("get jobs");
  }

  private static Instant dueSoon() {
    return Instant.now().plusSeconds(3);
  }

  /**
   * Creates the tasks, plays the Job controller (each new Job completes at once), and waits until
   * every task reached {@code phase} and its last Event is recorded; returns the operator's
   * requests about the tasks from their creation until {@link #TRAILING} after that, so requests
   * that trail the phase (a late re-read, a second write) count too.
   */
  private static Map<String, Long> requestsUntil(
      OperatorScaleLab lab,
      String prefix,
      IntFunction<DelayedTask> task,
      Phase phase,
      String lastEvent) {
    Instant from = Instant.now();
    for (int i = 0; i < TASKS; i++) {
      lab.client().resource(task.apply(i)).create();
    }
    await(prefix + "-* reach " + phase + " with their " + lastEvent + " Event")
        .atMost(TIMEOUT)
        .until(
            () -> {
              for (Job job : lab.client().batch().v1().jobs().inNamespace(NS).list().getItems()) {
                if (job.getStatus() == null
                    || job.getStatus().getConditions() == null
                    || job.getStatus().getConditions().isEmpty()) {
                  JobOutcomes.complete(lab.client(), job);
                }
              }
              long done =
                  lab
                      .client()
                      .resources(DelayedTask.class)
                      .inNamespace(NS)
                      .list()
                      .getItems()
                      .stream()
                      .filter(t -> t.getMetadata().getName().startsWith(prefix + "-"))
                      .filter(t -> t.getStatus() != null && t.getStatus().getPhase() == phase)
                      .count();
              List<Event> events = lab.client().v1().events().inNamespace(NS).list().getItems();
              long recorded =
                  events.stream()
                      .filter(e -> lastEvent.equals(e.getReason()))
                      .filter(e -> e.getInvolvedObject().getName().startsWith(prefix + "-"))
                      .count();
              return done == TASKS && recorded == TASKS;
            });
    Instant to = Instant.now().plus(TRAILING);
    // The audit log has every request received before `to` once the clock is a moment past it.
    await("the trailing " + TRAILING)
        .atMost(TRAILING.plusSeconds(5))
        .pollInterval(Duration.ofMillis(100))
        .until(() -> Instant.now().isAfter(to.plusSeconds(1)));
    Map<String, Long> all = lab.target.operatorRequests(from, to);
    Map<String, Long> aboutTasks = new TreeMap<>();
    Map<String, Long> apart = new TreeMap<>();
    all.forEach(
        (kind, count) ->
            (kind.startsWith("list ") || kind.startsWith("watch ") || kind.contains("leases")
                    ? apart
                    : aboutTasks)
                .put(kind, count));
    System.out.printf(
        "%s-*: %d tasks, the operator's requests about them %s; left out: %s%n",
        prefix, TASKS, aboutTasks, apart);
    return aboutTasks;
  }

  private static double perTask(Map<String, Long> requests) {
    return requests.values().stream().mapToLong(Long::longValue).sum() / (double) TASKS;
  }
}
