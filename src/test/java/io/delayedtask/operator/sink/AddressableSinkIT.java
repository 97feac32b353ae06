package io.delayedtask.operator.sink;

import static io.delayedtask.operator.testing.Tasks.create;
import static io.delayedtask.operator.testing.Tasks.get;
import static io.delayedtask.operator.testing.Tasks.phase;
import static io.delayedtask.operator.testing.Tasks.rfc3339;
import static io.delayedtask.operator.testing.Tasks.task;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.cloudevents.CloudEvent;
import io.delayedtask.operator.DelayedTaskOperator;
import io.delayedtask.operator.api.v1alpha1.CeOverrides;
import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.DeliverySpec;
import io.delayedtask.operator.api.v1alpha1.Destination;
import io.delayedtask.operator.api.v1alpha1.Phase;
import io.delayedtask.operator.api.v1alpha1.ServiceReference;
import io.delayedtask.operator.config.OperatorConfig;
import io.delayedtask.operator.config.SinkConfig;
import io.delayedtask.operator.testing.KnativeStandIns;
import io.delayedtask.operator.testing.OperatorFixture;
import io.delayedtask.operator.testing.RealKubernetes;
import io.delayedtask.operator.testing.Receiver;
import io.delayedtask.operator.testing.RedisProcess;
import io.delayedtask.operator.testing.RequiresRealKubernetes;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBuilder;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBindingBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A {@code sink.ref} to a Knative Addressable, on a real API server: stand-in CRDs of the same
 * group and kind as Knative Serving's {@code Service} (serving.knative.dev/v1) and Eventing's
 * {@code Broker} (eventing.knative.dev/v1), whose {@code status.address.url} the test writes; the
 * operator runs with nothing but a token of a ServiceAccount holding the shipped RBAC
 * (k8s/30-rbac.yaml: the operator's ClusterRole, the aggregating {@code -addressables} ClusterRole,
 * the Lease Role), bound in this namespace, plus a ClusterRole labelled {@code
 * duck.knative.dev/addressable: "true"} as Knative labels its own. The addresses point at a
 * receiver on 127.0.0.1, allowed by a loopback entry in DELAYEDTASK_SINK_ALLOWED_URIS; every
 * request is read back by the CloudEvents SDK.
 */
@RequiresRealKubernetes
class AddressableSinkIT {
  private static final Duration TIMEOUT = Duration.ofSeconds(60);
  private static final String LEASE = "delayed-task-operator";

  @TempDir static Path dir;

  private static RealKubernetes kube;
  private static KubernetesClient admin;
  private static String ns;
  private static Receiver receiver;
  private static RedisProcess redis;
  private static KubernetesClient operatorClient;
  private static DelayedTaskOperator operator;

  @BeforeAll
  static void start() throws IOException {
    receiver = Receiver.start();
    kube = RealKubernetes.shared();
    kube.controllerManager(); // the ClusterRole aggregation controller among them
    admin = kube.client();
    ns = kube.createNamespace("addressable");
    kube.applyCrd(KnativeStandIns.crd(dir, "serving.knative.dev", "Service", "services", "ksvc"));
    kube.applyCrd(KnativeStandIns.crd(dir, "eventing.knative.dev", "Broker", "brokers", "bkr"));
    kube.applyCrd(KnativeStandIns.crd(dir, "eventing.knative.dev", "Trigger", "triggers", "trg"));
    grantShippedRbac();

    redis = RedisProcess.start();
    Path kubeconfig =
        kube.serviceAccountKubeconfig(ns, "operator", dir.resolve("operator.kubeconfig"));
    operatorClient =
        new KubernetesClientBuilder()
            .withConfig(Config.fromKubeconfig(Files.readString(kubeconfig)))
            .build();
    // The fixture's client would be the API server's admin: this operator holds only the shipped
    // RBAC.
    operator =
        OperatorFixture.startLeading(
            operatorClient,
            redis,
            ns,
            "addressable",
            Map.of(OperatorConfig.LEASE_NAME, LEASE, SinkConfig.ALLOWED_URIS, receiver.base()));
  }

  @AfterAll
  static void stop() {
    if (operator != null) {
      operator.close();
    }
    if (operatorClient != null) {
      operatorClient.close();
    }
    if (redis != null) {
      redis.close();
    }
    if (receiver != null) {
      receiver.close();
    }
  }

  @Test
  void aKnativeServiceIsReachedAtItsAddressWithThePathAndTheStatusSaysWhere() {
    KnativeStandIns.address(
        admin, ns, "serving.knative.dev/v1", "Service", "orders", receiver.base() + "/ksvc");
    create(
        admin,
        task(
            ns,
            "to-ksvc",
            s -> {
              s.setRunAt(rfc3339(Instant.now()));
              s.setSink(ref("serving.knative.dev/v1", "Service", "orders", "/cancel"));
              s.setData("{\"orderId\": 42}");
            }));

    await()
        .atMost(TIMEOUT)
        .until(() -> phase(admin, ns, "to-ksvc").orElse(null) == Phase.Succeeded);

    List<Receiver.Request> requests = receiver.requestsTo("/ksvc/cancel");
    assertThat(requests).hasSize(1);
    CloudEvent event = requests.get(0).event();
    assertThat(event.getType()).isEqualTo("io.delayedtask.task.due");
    assertThat(new String(event.getData().toBytes())).isEqualTo("{\"orderId\": 42}");
    assertThat(get(admin, ns, "to-ksvc").getStatus().getSinkUri())
        .isEqualTo(receiver.base() + "/ksvc/cancel");
  }

  @Test
  void aBrokerWithoutAnAddressYetIsARetrySayingSoThenItsAddressIsUsedWithTheOverrides() {
    KnativeStandIns.address(admin, ns, "eventing.knative.dev/v1", "Broker", "default", null);
    create(
        admin,
        task(
            ns,
            "to-broker",
            s -> {
              s.setRunAt(rfc3339(Instant.now()));
              s.setSink(ref("eventing.knative.dev/v1", "Broker", "default", null));
              s.setCeOverrides(new CeOverrides(Map.of("team", "orders")));
              DeliverySpec delivery = new DeliverySpec();
              delivery.setRetry(10);
              delivery.setBackoffPolicy("linear");
              delivery.setBackoffDelay("1s");
              s.setDelivery(delivery);
            }));

    await()
        .atMost(TIMEOUT)
        .untilAsserted(
            () -> {
              DelayedTask waiting = get(admin, ns, "to-broker");
              assertThat(waiting.getStatus().getPhase()).isEqualTo(Phase.Running);
              assertThat(waiting.getStatus().getDelivery().getAttempts()).isGreaterThanOrEqualTo(1);
              assertThat(waiting.getStatus().getDelivery().getNextAttemptTime()).isNotNull();
            });
    await()
        .atMost(TIMEOUT)
        .until(
            () ->
                admin.v1().events().inNamespace(ns).list().getItems().stream()
                    .anyMatch(
                        e ->
                            "to-broker".equals(e.getInvolvedObject().getName())
                                && e.getMessage() != null
                                && e.getMessage()
                                    .contains(
                                        "Broker default (eventing.knative.dev/v1) in namespace "
                                            + ns
                                            + " has no address yet (status.address.url is not set)")));
    assertThat(receiver.requestsTo("/broker")).isEmpty();

    KnativeStandIns.address(
        admin, ns, "eventing.knative.dev/v1", "Broker", "default", receiver.base() + "/broker");

    await()
        .atMost(TIMEOUT)
        .until(() -> phase(admin, ns, "to-broker").orElse(null) == Phase.Succeeded);
    CloudEvent event = receiver.requestsTo("/broker").get(0).event();
    assertThat(event.getExtension("team")).isEqualTo("orders");
    assertThat(get(admin, ns, "to-broker").getStatus().getSinkUri())
        .isEqualTo(receiver.base() + "/broker");
  }

  @Test
  void aRefToAKindThatIsNoAddressableIsInvalidNamingWhy() {
    Map<String, ServiceReference> refs =
        Map.of(
            "to-trigger", new ServiceReference("eventing.knative.dev/v1", "Trigger", "t"),
            "to-task", new ServiceReference("delayedtask.io/v1alpha1", "DelayedTask", "to-trigger"),
            "to-job", new ServiceReference("batch/v1", "Job", "j"),
            "to-nothing", new ServiceReference("nothing.example.com/v1", "Nothing", "n"));
    refs.forEach(
        (name, ref) ->
            create(
                admin,
                task(
                    ns,
                    name,
                    s -> {
                      s.setRunAt(rfc3339(Instant.now()));
                      Destination sink = new Destination();
                      sink.setRef(ref);
                      s.setSink(sink);
                    })));
    refs.forEach(
        (name, ref) ->
            await(name)
                .atMost(TIMEOUT)
                .untilAsserted(
                    () -> {
                      DelayedTask task = get(admin, ns, name);
                      assertThat(task.getStatus().getPhase()).isEqualTo(Phase.Invalid);
                      assertThat(task.getStatus().getMessage())
                          .startsWith(
                              "spec.sink.ref is "
                                  + ref.getApiVersion()
                                  + " "
                                  + ref.getKind()
                                  + ": ");
                    }));
    assertThat(get(admin, ns, "to-trigger").getStatus().getMessage())
        .contains("duck.knative.dev/addressable");
    assertThat(get(admin, ns, "to-nothing").getStatus().getMessage())
        .contains("serves no kind Nothing");
  }

  @Test
  void theOperatorReadsAddressablesOnlyThroughTheAggregatedRole() {
    assertThat(canList(operatorClient, "serving.knative.dev", "services")).isTrue();
    assertThat(canList(operatorClient, "eventing.knative.dev", "brokers")).isTrue();
    assertThat(canList(operatorClient, "eventing.knative.dev", "triggers"))
        .as("not labelled addressable")
        .isFalse();
    assertThat(canList(operatorClient, "serving.knative.dev", "services")).isTrue();
  }

  private static boolean canList(KubernetesClient client, String group, String resource) {
    var review =
        new io.fabric8.kubernetes.api.model.authorization.v1.SelfSubjectAccessReviewBuilder()
            .withNewSpec()
            .withNewResourceAttributes()
            .withGroup(group)
            .withResource(resource)
            .withVerb("list")
            .withNamespace(ns)
            .endResourceAttributes()
            .endSpec()
            .build();
    return client
        .authorization()
        .v1()
        .selfSubjectAccessReview()
        .create(review)
        .getStatus()
        .getAllowed();
  }

  private static Destination ref(String apiVersion, String kind, String name, String uri) {
    Destination sink = new Destination();
    sink.setRef(new ServiceReference(apiVersion, kind, name));
    sink.setUri(uri);
    return sink;
  }

  /**
   * The operator's ServiceAccount with the shipped RBAC bound in this namespace (names suffixed, as
   * the ClusterRoles are cluster-wide on a shared server), and Knative's kind of addressable role.
   */
  private static void grantShippedRbac() throws IOException {
    admin
        .serviceAccounts()
        .inNamespace(ns)
        .resource(
            new ServiceAccountBuilder()
                .withNewMetadata()
                .withName("operator")
                .endMetadata()
                .build())
        .create();
    List<HasMetadata> shipped;
    try (InputStream in = Files.newInputStream(Path.of("k8s", "30-rbac.yaml"))) {
      shipped = admin.load(in).items();
    }
    for (HasMetadata object : shipped) {
      String name = object.getMetadata().getName();
      if (object instanceof ClusterRole role
          && (name.equals("delayed-task-operator")
              || name.equals("delayed-task-operator-addressables"))) {
        role.getMetadata().setName(name + "-" + ns);
        admin.resource(role).create();
        bind("ClusterRole", name + "-" + ns);
      } else if (object instanceof Role role) {
        role.getMetadata().setNamespace(ns);
        admin.resource(role).create();
        bind("Role", name);
      }
    }
    // As Knative's serving and eventing label theirs (addressable-resolver aggregation).
    admin
        .resource(
            new ClusterRoleBuilder()
                .withNewMetadata()
                .withName("knative-addressables-" + ns)
                .withLabels(Map.of("duck.knative.dev/addressable", "true"))
                .endMetadata()
                .addNewRule()
                .withApiGroups("serving.knative.dev")
                .withResources("services", "services/status")
                .withVerbs("get", "list", "watch")
                .endRule()
                .addNewRule()
                .withApiGroups("eventing.knative.dev")
                .withResources("brokers", "brokers/status")
                .withVerbs("get", "list", "watch")
                .endRule()
                .build())
        .create();
    await("the aggregation controller fills the -addressables role")
        .atMost(TIMEOUT)
        .until(
            () -> {
              ClusterRole aggregated =
                  admin
                      .rbac()
                      .clusterRoles()
                      .withName("delayed-task-operator-addressables-" + ns)
                      .get();
              return aggregated.getRules() != null
                  && aggregated.getRules().stream()
                      .anyMatch(rule -> rule.getApiGroups().contains("eventing.knative.dev"));
            });
  }

  private static void bind(String kind, String roleName) {
    admin
        .resource(
            new RoleBindingBuilder()
                .withNewMetadata()
                .withName(roleName)
                .withNamespace(ns)
                .endMetadata()
                .withNewRoleRef()
                .withApiGroup("rbac.authorization.k8s.io")
                .withKind(kind)
                .withName(roleName)
                .endRoleRef()
                .addNewSubject()
                .withKind("ServiceAccount")
                .withName("operator")
                .withNamespace(ns)
                .endSubject()
                .build())
        .create();
  }
}
