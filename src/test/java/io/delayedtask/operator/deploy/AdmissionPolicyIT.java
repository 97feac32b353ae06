package io.delayedtask.operator.deploy;

import static io.delayedtask.operator.testing.Tasks.busyboxJob;
import static io.delayedtask.operator.testing.Tasks.rfc3339;
import static io.delayedtask.operator.testing.Tasks.statusOnly;
import static io.delayedtask.operator.testing.Tasks.withJob;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.DelayedTaskStatus;
import io.delayedtask.operator.api.v1alpha1.Destination;
import io.delayedtask.operator.api.v1alpha1.Phase;
import io.delayedtask.operator.api.v1alpha1.ServiceReference;
import io.delayedtask.operator.testing.RealKubernetes;
import io.delayedtask.operator.testing.RequiresRealKubernetes;
import io.fabric8.kubernetes.api.model.KubernetesResourceList;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicy;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.PolicyRuleBuilder;
import io.fabric8.kubernetes.api.model.rbac.RoleBindingBuilder;
import io.fabric8.kubernetes.api.model.rbac.RoleBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.NonNamespaceOperation;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The chart's ValidatingAdmissionPolicies on a real API server. A DelayedTask with a jobTemplate
 * makes the operator create a Job with the operator's rights, so only who may create Jobs in the
 * namespace may write one; one with a sink.audience makes it send a token of the sender
 * ServiceAccount, so only who may create that ServiceAccount's tokens may write one; and only the
 * operator writes the status, which decides what fires. Users are impersonated (the admin client
 * may impersonate): one bound to a Role with every verb on delayedtasks and nothing else, one bound
 * to the built-in {@code edit} ClusterRole (which the chart's aggregated role extends to
 * DelayedTasks), one that may also create tokens of the sender ServiceAccount, one that may create
 * tokens of another ServiceAccount only, one that may only write the status subresource; and the
 * operator's own ServiceAccount token.
 *
 * <p>A server of its own: the policy is cluster-wide. Two controllers of any cluster run: role
 * aggregation, so that {@code edit} holds the chart's DelayedTask rules, and the policy status
 * controller, which type-checks the policy's expressions against the CRD's schema.
 */
@RequiresRealKubernetes
class AdmissionPolicyIT {
  private static final Duration ACTIVE = Duration.ofSeconds(60);

  /** All verbs on delayedtasks, nothing on Jobs. */
  private static final String TASK_WRITER = "task-writer";

  /** The built-in edit ClusterRole in the namespace. */
  private static final String EDITOR = "editor";

  /** May read tasks and write their status, nothing else: refused by the status policy. */
  private static final String STATUS_WRITER = "status-writer";

  /**
   * All verbs on delayedtasks and create on serviceaccounts/token for the sender ServiceAccount
   * only.
   */
  private static final String TOKEN_WRITER = "token-writer";

  /**
   * All verbs on delayedtasks and create on serviceaccounts/token for another ServiceAccount only.
   */
  private static final String OTHER_TOKEN_WRITER = "other-token-writer";

  private static final String SENDER = "delayedtask-sender";

  /** All verbs on delayedtasks and get on the signing Secret only. */
  private static final String SECRET_READER = "secret-reader";

  /** All verbs on delayedtasks and get on another Secret only. */
  private static final String OTHER_SECRET_READER = "other-secret-reader";

  private static final String SIGNING = "delayedtask-signing";
  private static final Path PLAIN_POLICY = Manifests.PLAIN.resolve("15-admission-policy.yaml");

  @TempDir static Path dir;

  private static RealKubernetes kube;
  private static KubernetesClient admin;
  private static ChartRelease release;
  private static String ns;
  private static final Map<String, KubernetesClient> users = new HashMap<>();

  @BeforeAll
  static void installTheChartAndBindTheUsers() {
    kube = RealKubernetes.startDedicated();
    kube.controllerManager(
        "clusterrole-aggregation", "validatingadmissionpolicy-status-controller");
    admin = kube.client();
    release = ChartRelease.install(kube, "dto", kube.createNamespace("ops"), "{}");
    ns = kube.createNamespace("apps");

    bindRole(
        TASK_WRITER,
        new PolicyRuleBuilder()
            .withApiGroups("delayedtask.io")
            .withResources("delayedtasks")
            .withVerbs("*")
            .build());
    bindRole(
        STATUS_WRITER,
        new PolicyRuleBuilder()
            .withApiGroups("delayedtask.io")
            .withResources("delayedtasks")
            .withVerbs("get", "list", "watch")
            .build(),
        new PolicyRuleBuilder()
            .withApiGroups("delayedtask.io")
            .withResources("delayedtasks/status")
            .withVerbs("get", "update", "patch")
            .build());
    PolicyRule allOnTasks =
        new PolicyRuleBuilder()
            .withApiGroups("delayedtask.io")
            .withResources("delayedtasks")
            .withVerbs("*")
            .build();
    bindRole(
        TOKEN_WRITER,
        allOnTasks,
        new PolicyRuleBuilder()
            .withApiGroups("")
            .withResources("serviceaccounts/token")
            .withResourceNames(SENDER)
            .withVerbs("create")
            .build());
    bindRole(
        OTHER_TOKEN_WRITER,
        allOnTasks,
        new PolicyRuleBuilder()
            .withApiGroups("")
            .withResources("serviceaccounts/token")
            .withResourceNames("orders")
            .withVerbs("create")
            .build());
    bindRole(
        SECRET_READER,
        allOnTasks,
        new PolicyRuleBuilder()
            .withApiGroups("")
            .withResources("secrets")
            .withResourceNames(SIGNING)
            .withVerbs("get")
            .build());
    bindRole(
        OTHER_SECRET_READER,
        allOnTasks,
        new PolicyRuleBuilder()
            .withApiGroups("")
            .withResources("secrets")
            .withResourceNames("orders")
            .withVerbs("get", "list", "watch")
            .build());
    admin
        .rbac()
        .roleBindings()
        .inNamespace(ns)
        .resource(
            new RoleBindingBuilder()
                .withNewMetadata()
                .withName(EDITOR)
                .endMetadata()
                .withNewRoleRef()
                .withApiGroup("rbac.authorization.k8s.io")
                .withKind("ClusterRole")
                .withName("edit")
                .endRoleRef()
                .addNewSubject()
                .withApiGroup("rbac.authorization.k8s.io")
                .withKind("User")
                .withName(EDITOR)
                .endSubject()
                .build())
        .create();

    // The policy and binding become active a moment after they are stored; the edit role holds
    // the chart's DelayedTask rules once the aggregation controller has seen them.
    await("the policy refuses a probe")
        .atMost(ACTIVE)
        .untilAsserted(
            () ->
                assertRefused(
                    () ->
                        tasks(TASK_WRITER).resource(withJob(ns, "probe", soon())).dryRun().create(),
                    jobRefusal(TASK_WRITER)));
    await("the status policy refuses a probe")
        .atMost(ACTIVE)
        .untilAsserted(
            () -> {
              tasks(EDITOR)
                  .resource(statusOnly(ns, "status-probe", soon()))
                  .createOr(existing -> existing.update());
              DelayedTask probe = tasks(STATUS_WRITER).withName("status-probe").get();
              probe.setStatus(status(Phase.Scheduled, "probe"));
              assertRefused(
                  () -> tasks(STATUS_WRITER).resource(probe).dryRun().updateStatus(),
                  statusRefusal(STATUS_WRITER, "status-probe"));
            });
    await("edit covers DelayedTasks")
        .atMost(ACTIVE)
        .ignoreExceptions()
        .untilAsserted(
            () -> tasks(EDITOR).resource(withJob(ns, "probe", soon())).dryRun().create());
  }

  @AfterAll
  static void stop() {
    users.values().forEach(KubernetesClient::close);
    if (kube != null) {
      kube.close();
    }
  }

  @Test
  void withoutJobRightsATaskWithAJobTemplateIsRefusedWithAMessageSayingWhatToDo() {
    assertRefused(
        () -> tasks(TASK_WRITER).resource(withJob(ns, "refused", soon())).create(),
        jobRefusal(TASK_WRITER));
    assertThat(admin.resources(DelayedTask.class).inNamespace(ns).withName("refused").get())
        .isNull();
  }

  @Test
  void withoutJobRightsATaskWithoutAJobTemplateIsAdmittedAndCannotGainOneByUpdateOrPatch() {
    DelayedTask task = tasks(TASK_WRITER).resource(statusOnly(ns, "status-only", soon())).create();
    assertThat(task.getMetadata().getUid()).isNotNull();

    task.getSpec().setJobTemplate(busyboxJob());
    assertRefused(() -> tasks(TASK_WRITER).resource(task).update(), jobRefusal(TASK_WRITER));
    String jobTemplate = Manifests.SERIALIZATION.asJson(busyboxJob());
    assertRefused(
        () ->
            tasks(TASK_WRITER)
                .withName("status-only")
                .patch(
                    PatchContext.of(PatchType.JSON_MERGE),
                    "{\"spec\":{\"jobTemplate\":" + jobTemplate + "}}"),
        jobRefusal(TASK_WRITER));
    assertRefused(
        () ->
            tasks(TASK_WRITER)
                .withName("status-only")
                .patch(
                    PatchContext.of(PatchType.JSON),
                    "[{\"op\":\"add\",\"path\":\"/spec/jobTemplate\",\"value\":"
                        + jobTemplate
                        + "}]"),
        jobRefusal(TASK_WRITER));
    assertThat(
            admin
                .resources(DelayedTask.class)
                .inNamespace(ns)
                .withName("status-only")
                .get()
                .getSpec()
                .getJobTemplate())
        .isNull();

    DelayedTask relabelled =
        tasks(TASK_WRITER)
            .withName("status-only")
            .edit(
                t -> {
                  t.getMetadata().setLabels(Map.of("team", "billing"));
                  t.getSpec().setRunAt(rfc3339(Instant.now().plus(Duration.ofHours(2))));
                  return t;
                });
    assertThat(relabelled.getMetadata().getLabels())
        .as("other updates pass")
        .containsEntry("team", "billing");
  }

  @Test
  void whoeverMayCreateJobsMayWriteATaskWithAJobTemplate() {
    DelayedTask task = tasks(EDITOR).resource(withJob(ns, "edited", soon())).create();
    assertThat(task.getSpec().getJobTemplate()).isNotNull();
    DelayedTask patched =
        tasks(EDITOR)
            .withName("edited")
            .patch(
                PatchContext.of(PatchType.JSON_MERGE),
                "{\"spec\":{\"jobTemplate\":{\"spec\":{\"backoffLimit\":2}}}}");
    assertThat(patched.getSpec().getJobTemplate().getSpec().getBackoffLimit()).isEqualTo(2);
    tasks(EDITOR).resource(statusOnly(ns, "edited-status-only", soon())).create();
    tasks(EDITOR)
        .withName("edited-status-only")
        .edit(
            t -> {
              t.getSpec().setJobTemplate(busyboxJob());
              return t;
            });
  }

  @Test
  void withoutJobRightsATaskWithAJobTemplateCannotBeChangedButMayBeDeleted() {
    tasks(EDITOR).resource(withJob(ns, "theirs", soon())).create();
    assertRefused(
        () ->
            tasks(TASK_WRITER)
                .withName("theirs")
                .edit(
                    t -> {
                      t.getSpec().setRunAt(rfc3339(Instant.now().plus(Duration.ofMinutes(5))));
                      return t;
                    }),
        jobRefusal(TASK_WRITER));
    // Firing now acts as the spec does: the policy applies to the annotation's patch too.
    assertRefused(
        () ->
            tasks(TASK_WRITER)
                .withName("theirs")
                .patch(
                    PatchContext.of(PatchType.JSON_MERGE),
                    "{\"metadata\":{\"annotations\":{\"delayedtask.io/fire-now\":\""
                        + rfc3339(Instant.now())
                        + "\"}}}"),
        jobRefusal(TASK_WRITER));
    assertThat(tasks(TASK_WRITER).withName("theirs").delete())
        .as("DELETE is not matched")
        .isNotEmpty();
  }

  @Test
  void withoutTokenRightsATaskWithAnAudienceIsRefusedWithAMessageSayingWhatToDo() {
    assertRefused(
        () -> tasks(TASK_WRITER).resource(withAudience("no-token-rights")).create(),
        audienceRefusal(TASK_WRITER));
    assertRefused(
        () -> tasks(OTHER_TOKEN_WRITER).resource(withAudience("other-token-rights")).create(),
        audienceRefusal(OTHER_TOKEN_WRITER));
    assertThat(admin.resources(DelayedTask.class).inNamespace(ns).list().getItems())
        .extracting(t -> t.getMetadata().getName())
        .doesNotContain("no-token-rights", "other-token-rights");
    // The built-in edit role may create any ServiceAccount's tokens in its namespace: so may its
    // tasks.
    assertThat(
            tasks(EDITOR)
                .resource(withAudience("by-editor"))
                .create()
                .getSpec()
                .getSink()
                .getAudience())
        .isEqualTo("orders");
  }

  @Test
  void whoeverMayCreateTheSendersTokensMayWriteATaskWithAnAudienceAndNoOneElseMayPatchOneIn() {
    DelayedTask admitted = tasks(TOKEN_WRITER).resource(withAudience("with-token-rights")).create();
    assertThat(admitted.getSpec().getSink().getAudience()).isEqualTo("orders");
    tasks(TOKEN_WRITER)
        .withName("with-token-rights")
        .edit(
            t -> {
              t.getSpec().getSink().setAudience("billing");
              return t;
            });

    DelayedTask plain = withAudience("audience-patched-in");
    plain.getSpec().getSink().setAudience(null);
    tasks(TASK_WRITER).resource(plain).create();
    assertRefused(
        () ->
            tasks(TASK_WRITER)
                .withName("audience-patched-in")
                .patch(
                    PatchContext.of(PatchType.JSON_MERGE),
                    "{\"spec\":{\"sink\":{\"audience\":\"orders\"}}}"),
        audienceRefusal(TASK_WRITER));
    assertThat(
            admin
                .resources(DelayedTask.class)
                .inNamespace(ns)
                .withName("audience-patched-in")
                .get()
                .getSpec()
                .getSink()
                .getAudience())
        .isNull();
  }

  @Test
  void withoutGetOnTheSigningSecretATaskThatSignsIsRefusedNamingTheUserTheRightAndTheField() {
    assertRefused(
        () -> tasks(TASK_WRITER).resource(signed("unsigned-rights", true, false)).create(),
        signingRefusal(TASK_WRITER, "spec.sink.signing"));
    assertRefused(
        () -> tasks(OTHER_SECRET_READER).resource(signed("other-secret", true, false)).create(),
        signingRefusal(OTHER_SECRET_READER, "spec.sink.signing"));
    assertRefused(
        () -> tasks(TASK_WRITER).resource(signed("dead-unsigned-rights", false, true)).create(),
        signingRefusal(TASK_WRITER, "spec.delivery.deadLetterSink.signing"));
    assertThat(admin.resources(DelayedTask.class).inNamespace(ns).list().getItems())
        .extracting(t -> t.getMetadata().getName())
        .doesNotContain("unsigned-rights", "other-secret", "dead-unsigned-rights");

    assertThat(
            tasks(SECRET_READER)
                .resource(signed("by-secret-reader", true, true))
                .create()
                .getSpec()
                .getSink()
                .getSigning()
                .getKey())
        .isEqualTo("orders");
    // The built-in edit role may read the namespace's Secrets: so may its tasks sign.
    tasks(EDITOR).resource(signed("by-editor-signed", true, true)).create();

    tasks(TASK_WRITER).resource(signed("signing-patched-in", false, false)).create();
    assertRefused(
        () ->
            tasks(TASK_WRITER)
                .withName("signing-patched-in")
                .patch(
                    PatchContext.of(PatchType.JSON_MERGE),
                    "{\"spec\":{\"sink\":{\"signing\":{\"key\":\"orders\"}}}}"),
        signingRefusal(TASK_WRITER, "spec.sink.signing"));
    assertRefused(
        () ->
            tasks(TASK_WRITER)
                .withName("signing-patched-in")
                .patch(
                    PatchContext.of(PatchType.JSON_MERGE),
                    "{\"spec\":{\"delivery\":{\"deadLetterSink\":{\"uri\":\"/dead\",\"ref\":{\"apiVersion\":\"v1\","
                        + "\"kind\":\"Service\",\"name\":\"orders\"},\"signing\":{\"key\":\"dead\"}}}}}"),
        signingRefusal(TASK_WRITER, "spec.delivery.deadLetterSink.signing"));
  }

  @Test
  void statusWritesByAnyoneButTheOperatorAreRefusedWithAMessage() {
    tasks(EDITOR).resource(withJob(ns, "running", soon())).create();
    DelayedTask byStatusWriter = tasks(STATUS_WRITER).withName("running").get();
    byStatusWriter.setStatus(status(Phase.Scheduled, "written by a user"));
    assertRefused(
        () -> tasks(STATUS_WRITER).resource(byStatusWriter).updateStatus(),
        statusRefusal(STATUS_WRITER, "running"));
    assertRefused(
        () ->
            tasks(STATUS_WRITER)
                .withName("running")
                .subresource("status")
                .patch(
                    PatchContext.of(PatchType.JSON_MERGE),
                    "{\"status\":{\"dueTime\":\"2026-12-03T07:00:00.000Z\"}}"),
        statusRefusal(STATUS_WRITER, "running"));
    assertThat(
            admin
                .resources(DelayedTask.class)
                .inNamespace(ns)
                .withName("running")
                .get()
                .getStatus())
        .as("nothing written")
        .isNull();

    Path kubeconfig = release.serviceAccountKubeconfig(dir.resolve("operator.kubeconfig"));
    try (KubernetesClient operator = RealKubernetes.clientOf(kubeconfig)) {
      var asOperator = operator.resources(DelayedTask.class).inNamespace(ns);
      DelayedTask read = asOperator.withName("running").get();
      read.setStatus(status(Phase.Running, "written by the operator"));
      // The operator writes a status by PUT only (StatusWriter), the one status verb its RBAC
      // grants.
      assertThat(asOperator.resource(read).updateStatus().getStatus().getPhase())
          .isEqualTo(Phase.Running);
    }
    DelayedTask byAdmin =
        admin.resources(DelayedTask.class).inNamespace(ns).withName("running").get();
    byAdmin.getStatus().setMessage("repaired by a cluster admin");
    assertThat(
            admin
                .resources(DelayedTask.class)
                .inNamespace(ns)
                .resource(byAdmin)
                .updateStatus()
                .getStatus()
                .getMessage())
        .as("system:masters excepted")
        .isEqualTo("repaired by a cluster admin");
  }

  @Test
  void theChartsPoliciesAreTypeCheckedCleanAndThePlainManifestIsAcceptedToo() {
    for (String name :
        List.of(release.fullname() + "-author-rights", release.fullname() + "-status-writer")) {
      await("the policy's status")
          .atMost(ACTIVE)
          .ignoreExceptions()
          .untilAsserted(
              () -> {
                ValidatingAdmissionPolicy stored =
                    admin
                        .admissionRegistration()
                        .v1()
                        .validatingAdmissionPolicies()
                        .withName(name)
                        .get();
                assertThat(stored.getStatus().getObservedGeneration())
                    .isEqualTo(stored.getMetadata().getGeneration());
                assertThat(stored.getStatus().getTypeChecking().getExpressionWarnings())
                    .as("the expressions of %s type-check against the DelayedTask schema", name)
                    .isNullOrEmpty();
              });
      assertThat(
              admin
                  .admissionRegistration()
                  .v1()
                  .validatingAdmissionPolicyBindings()
                  .withName(name)
                  .get()
                  .getSpec()
                  .getValidationActions())
          .containsExactly("Deny");
    }

    RealKubernetes.Kubectl.Result plain =
        kube.kubectl("apply", "--dry-run=server", "-f", PLAIN_POLICY.toString());
    assertThat(plain.ok()).as("k8s/ policy: %s", plain.output()).isTrue();
  }

  private static void assertRefused(Runnable request, String message) {
    assertThatThrownBy(request::run)
        .isInstanceOfSatisfying(
            KubernetesClientException.class,
            e -> {
              assertThat(e.getCode()).as(e.getMessage()).isEqualTo(403);
              assertThat(e.getStatus().getMessage()).endsWith(message);
            });
  }

  private static String jobRefusal(String user) {
    return "a DelayedTask with spec.jobTemplate creates Jobs, and "
        + user
        + " may not create Jobs in namespace "
        + ns
        + ": ask for the create verb on jobs.batch there, or remove spec.jobTemplate";
  }

  private static String audienceRefusal(String user) {
    return "a DelayedTask with spec.sink.audience sends a token of ServiceAccount "
        + SENDER
        + ", and "
        + user
        + " may not create tokens for it in namespace "
        + ns
        + ": ask for the create verb on serviceaccounts/token"
        + " (resourceNames: "
        + SENDER
        + ") there, or remove spec.sink.audience";
  }

  private static String signingRefusal(String user, String field) {
    return "a DelayedTask with "
        + field
        + " signs with Secret "
        + SIGNING
        + ", and "
        + user
        + " may not get it in "
        + "namespace "
        + ns
        + ": ask for the get verb on secrets (resourceNames: "
        + SIGNING
        + ") there, or remove "
        + field;
  }

  /**
   * A task delivering to the Service orders, signing there and at its dead-letter sink as asked.
   */
  private static DelayedTask signed(String name, boolean sinkSigned, boolean deadLetterSigned) {
    return io.delayedtask.operator.testing.Tasks.task(
        ns,
        name,
        spec -> {
          spec.setRunAt(rfc3339(soon()));
          Destination sink = new Destination();
          sink.setRef(new ServiceReference("v1", "Service", "orders"));
          if (sinkSigned) {
            sink.setSigning(new io.delayedtask.operator.api.v1alpha1.Signing("orders"));
          }
          spec.setSink(sink);
          if (deadLetterSigned) {
            Destination dead = new Destination();
            dead.setRef(new ServiceReference("v1", "Service", "dead-letters"));
            dead.setSigning(new io.delayedtask.operator.api.v1alpha1.Signing("dead"));
            spec.setDelivery(new io.delayedtask.operator.api.v1alpha1.DeliverySpec());
            spec.getDelivery().setDeadLetterSink(dead);
          }
        });
  }

  private static String statusRefusal(String user, String task) {
    return user
        + " may not write the status of DelayedTask "
        + ns
        + "/"
        + task
        + ": only the operator (system:"
        + "serviceaccount:"
        + release.namespace()
        + ":"
        + release.fullname()
        + ") writes it, as the status decides"
        + " what fires; change the spec instead";
  }

  /** A task delivering to the Service orders with a token for the audience orders. */
  private static DelayedTask withAudience(String name) {
    return io.delayedtask.operator.testing.Tasks.task(
        ns,
        name,
        spec -> {
          spec.setRunAt(rfc3339(soon()));
          Destination sink = new Destination();
          sink.setRef(new ServiceReference("v1", "Service", "orders"));
          sink.setAudience("orders");
          spec.setSink(sink);
        });
  }

  /** DelayedTasks of the test namespace, as {@code user}. */
  private static NonNamespaceOperation<
          DelayedTask, KubernetesResourceList<DelayedTask>, Resource<DelayedTask>>
      tasks(String user) {
    KubernetesClient client = users.computeIfAbsent(user, name -> kube.impersonating(name, null));
    return client.resources(DelayedTask.class).inNamespace(ns);
  }

  private static void bindRole(String user, PolicyRule... rules) {
    admin
        .rbac()
        .roles()
        .inNamespace(ns)
        .resource(
            new RoleBuilder()
                .withNewMetadata()
                .withName(user)
                .endMetadata()
                .withRules(rules)
                .build())
        .create();
    admin
        .rbac()
        .roleBindings()
        .inNamespace(ns)
        .resource(
            new RoleBindingBuilder()
                .withNewMetadata()
                .withName(user)
                .endMetadata()
                .withNewRoleRef()
                .withApiGroup("rbac.authorization.k8s.io")
                .withKind("Role")
                .withName(user)
                .endRoleRef()
                .addNewSubject()
                .withApiGroup("rbac.authorization.k8s.io")
                .withKind("User")
                .withName(user)
                .endSubject()
                .build())
        .create();
  }

  private static DelayedTaskStatus status(Phase phase, String message) {
    DelayedTaskStatus status = new DelayedTaskStatus();
    status.setPhase(phase);
    status.setMessage(message);
    return status;
  }

  private static Instant soon() {
    return Instant.now().plus(Duration.ofHours(1));
  }
}
