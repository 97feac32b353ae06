package io.delayedtask.operator.deploy;

import static io.delayedtask.operator.testing.Tasks.busyboxJob;
import static io.delayedtask.operator.testing.Tasks.create;
import static io.delayedtask.operator.testing.Tasks.get;
import static io.delayedtask.operator.testing.Tasks.phase;
import static io.delayedtask.operator.testing.Tasks.rfc3339;
import static io.delayedtask.operator.testing.Tasks.task;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.DelayedTaskQueue;
import io.delayedtask.operator.api.v1alpha1.DelayedTaskQueueSpec;
import io.delayedtask.operator.api.v1alpha1.Destination;
import io.delayedtask.operator.api.v1alpha1.Phase;
import io.delayedtask.operator.api.v1alpha1.ServiceReference;
import io.delayedtask.operator.config.OperatorConfig;
import io.delayedtask.operator.config.SinkConfig;
import io.delayedtask.operator.reconcile.DelayedTaskReconciler;
import io.delayedtask.operator.reconcile.TaskEvents;
import io.delayedtask.operator.schedule.RedisSchedule;
import io.delayedtask.operator.task.job.JobNames;
import io.delayedtask.operator.testing.AuditLog;
import io.delayedtask.operator.testing.Events;
import io.delayedtask.operator.testing.JobOutcomes;
import io.delayedtask.operator.testing.OperatorProcess;
import io.delayedtask.operator.testing.RealKubernetes;
import io.delayedtask.operator.testing.Receiver;
import io.delayedtask.operator.testing.RedisProcess;
import io.delayedtask.operator.testing.RequiresLoopbackOnlyNetwork;
import io.delayedtask.operator.testing.RequiresRealKubernetes;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobBuilder;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.awaitility.core.ConditionFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the operator's RBAC must grant, read from what it asks: the chart is installed on a real API
 * server that writes an audit log, the operator jar runs with nothing but a token of the chart's
 * ServiceAccount, and takes tasks through every path of the code that calls the API server. The
 * requests the chart's bindings allowed, flattened to grants, must be {@link Rbac#USED} (which the
 * chart and the plain manifests are held to by HelmChartTest and PlainManifestsTest) and what the
 * installed chart grants; a request the server refused (403) is a grant missing. So a grant nothing
 * uses fails as surely as one that is missing.
 *
 * <p>The paths: leader election (its Lease); a status-only task fired, then fired again after its
 * runAt changed, its Event counted up by another writer in between (the operator's repeat then
 * reads the Event: get and patch of it); a Job task followed to Succeeded; a task whose Job name a
 * foreign Job already has (create answers 409, the Job is read); a TTL deletion; an invalid task; a
 * suspended task resumed; a task of an earlier version with the legacy finalizer (taken off); a
 * sink task with an audience (a TokenRequest for the sender ServiceAccount) and signing (the
 * signing Secret's informer) and one with a Service ref (the Service read); and a Redis entry whose
 * task does not exist (the claim reads the task from the API server: 404).
 *
 * <p>With OwnerReferencesPermissionEnforcement on, as LeastPrivilegeIT, so the finalizers grant,
 * which no request shows, is still needed by one that does (see {@link #NOT_A_REQUEST}).
 */
@RequiresRealKubernetes
@RequiresLoopbackOnlyNetwork
class RbacFromAuditLogIT {
  private static final Duration START = Duration.ofSeconds(120);
  private static final Duration STEP = Duration.ofSeconds(30);
  private static final Pattern BINDING =
      Pattern.compile("allowed by (?:Cluster)?RoleBinding \"([^\"/]+)");

  /**
   * Grants the chart must give although no request of the operator shows them in the audit log,
   * each with why; keep this as short as it can be.
   */
  private static final Map<String, Set<String>> NOT_A_REQUEST =
      Map.of(
          Rbac.OPERATOR_SECTION,
              Set.of(
                  // OwnerReferencesPermissionEnforcement (on in OpenShift, and here) asks the
                  // authorizer
                  // whether who creates a Job whose owner reference sets blockOwnerDeletion may
                  // update the
                  // owner's finalizers: a check inside the Job's create, not a request. Without the
                  // grant
                  // that create is refused with 403, which this test reports as a grant missing.
                  "delayedtask.io/delayedtasks/finalizers: update"),
          Rbac.LEADER_ELECTION_SECTION,
              Set.of(
                  // JOSDK's LeaderElectionManager asks a SelfSubjectRulesReview (allowed to every
                  // user,
                  // see byEveryUser) before it starts, and refuses to start unless create, get and
                  // update
                  // on leases are among the rules; fabric8's LeaseLock then renews with patch,
                  // never update.
                  "coordination.k8s.io/leases[{lease}]: update"));

  @TempDir static Path dir;

  @Test
  void theChartGrantsExactlyWhatTheOperatorAsksOfTheApiServer() {
    AuditLog audit = AuditLog.in(dir.resolve("audit"));
    List<String> flags = new ArrayList<>(List.of(audit.apiServerFlags()));
    flags.add("--enable-admission-plugins=OwnerReferencesPermissionEnforcement");
    try (RealKubernetes kube = RealKubernetes.startDedicated(flags.toArray(String[]::new));
        RedisProcess redis = RedisProcess.start();
        Receiver receiver = Receiver.startHttps()) {
      KubernetesClient admin = kube.client();
      ChartRelease release = ChartRelease.install(kube, "rbac", kube.createNamespace("ops"), "{}");
      String user = "system:serviceaccount:" + release.namespace() + ":" + release.fullname();
      String pod = release.fullname() + "-5d8f9c7b6-x2x4k";
      Map<String, String> env = new HashMap<>(release.operatorEnvironment(pod));
      env.put(
          "KUBECONFIG",
          release.serviceAccountKubeconfig(dir.resolve("operator.kubeconfig")).toString());
      // The chart points at its bundled Redis Service, which has no pod here; and port 8080 may be
      // taken.
      env.put(OperatorConfig.REDIS_URI, redis.uri());
      env.put(OperatorConfig.HTTP_PORT, "0");
      env.put(SinkConfig.ALLOWED_URIS, receiver.base());
      Map<String, String> names =
          Map.of(
              "{lease}", env.get(OperatorConfig.LEASE_NAME),
              "{sender}", env.get(SinkConfig.SERVICE_ACCOUNT),
              "{signing}", env.get(SinkConfig.SIGNING_SECRET),
              // The one CRD the operator reads (its uid keys the admission records), granted by
              // name.
              "delayedtasks.delayedtask.io", "delayedtasks.delayedtask.io");

      try (OperatorProcess operator = OperatorProcess.start(pod, env)) {
        try {
          everyPath(kube, release, pod, env, audit, user, receiver, operator);
        } catch (AssertionError | RuntimeException e) {
          throw new AssertionError(
              e.getMessage()
                  + "\nrefused requests: "
                  + refused(audit.requests(user))
                  + "\noperator log:\n"
                  + operator.log(),
              e);
        }
        assertThat(operator.log())
            .as("nothing the chart's RBAC refused")
            .doesNotContainIgnoringCase("forbidden");
      }

      assertThat(refused(audit.requests(user)))
          .as("requests the chart's RBAC refused: grants missing")
          .isEmpty();
      // The log has every request once the server answered it; the last ones may trail the phases
      // seen.
      await("the audit log shows exactly the chart's grants in use")
          .atMost(Duration.ofSeconds(10))
          .untilAsserted(
              () -> {
                List<AuditLog.Request> requests = audit.requests(user);
                assertThat(refused(requests))
                    .as("requests the chart's RBAC refused: grants missing")
                    .isEmpty();
                Map<String, Set<String>> used = usedBySection(requests, release, names);
                Map<String, Set<String>> expected = withNotARequest(used);
                Map<String, Set<String>> checkedIn = Rbac.checkedIn();
                String hint =
                    "%n%s as the audit log shows it (copy it there if the change is meant):%n%s"
                        .formatted(Rbac.USED, asFile(expected));
                assertThat(checkedIn.keySet()).as("sections" + hint).isEqualTo(expected.keySet());
                expected.forEach(
                    (section, lines) ->
                        assertGrantsExactly(
                            "[" + section + "] of " + Rbac.USED + hint,
                            checkedIn.get(section),
                            lines));
              });
      List<AuditLog.Request> requests = audit.requests(user);
      Map<String, Set<String>> used = withNotARequest(usedBySection(requests, release, names));
      Set<String> byEveryUser = byEveryUser(requests, release);
      System.out.printf(
          "the operator's requests, as grants:%n%s%nallowed to every user: %s%n",
          asFile(used), byEveryUser);
      assertThat(byEveryUser)
          .as("the rest is allowed by built-in roles, which the chart need not grant")
          .allMatch(
              r ->
                  r.endsWith("(system:basic-user)")
                      || r.endsWith("(system:public-info-viewer)")
                      || r.endsWith("(system:discovery)"))
          .as("JOSDK's check of its Lease rights, the reason for the leases update granted")
          .contains("create authorization.k8s.io/selfsubjectrulesreviews (system:basic-user)");
      assertGrantsExactly(
          "the installed chart's ClusterRole",
          Rbac.grants(
              admin.rbac().clusterRoles().withName(release.fullname()).require().getRules()),
          Rbac.fill(used.get(Rbac.OPERATOR_SECTION), names));
      assertGrantsExactly(
          "the installed chart's admission policy ClusterRole",
          Rbac.grants(
              admin
                  .rbac()
                  .clusterRoles()
                  .withName(release.fullname() + "-admission-policy")
                  .require()
                  .getRules()),
          used.get(Rbac.ADMISSION_POLICY_SECTION));
      Role lease =
          admin
              .rbac()
              .roles()
              .inNamespace(release.namespace())
              .withName(release.fullname() + "-leader-election")
              .require();
      assertGrantsExactly(
          "the installed chart's leader election Role",
          Rbac.grants(lease.getRules()),
          Rbac.fill(used.get(Rbac.LEADER_ELECTION_SECTION), names));
    }
  }

  /** Takes tasks through every path of the code that calls the API server. */
  private static void everyPath(
      RealKubernetes kube,
      ChartRelease release,
      String pod,
      Map<String, String> env,
      AuditLog audit,
      String user,
      Receiver receiver,
      OperatorProcess operator) {
    KubernetesClient admin = kube.client();
    Supplier<ConditionFactory> step =
        () -> await().atMost(STEP).failFast("the operator exited", () -> !operator.isAlive());
    await("the operator leads through its Lease")
        .atMost(START)
        .untilAsserted(
            () -> {
              Lease lease =
                  admin
                      .resources(Lease.class)
                      .inNamespace(release.namespace())
                      .withName(env.get(OperatorConfig.LEASE_NAME))
                      .get();
              assertThat(lease).isNotNull();
              assertThat(lease.getSpec().getHolderIdentity()).isEqualTo(pod);
            });
    String ns = kube.createNamespace("apps");

    // A Redis entry whose task is not in the cache: the claim asks the API server (404) and drops
    // it.
    String ghost = "ghost-" + UUID.randomUUID().toString().substring(0, 8);
    try (RedisSchedule schedule = RedisSchedule.open(OperatorConfig.fromEnv(env))) {
      schedule.schedule(ns + "/" + ghost + "/" + UUID.randomUUID(), Instant.now());
      step.get()
          .alias("the claim of a task that does not exist reads it")
          .until(
              () ->
                  audit.requests(user).stream()
                      .anyMatch(r -> r.verb().equals("get") && ghost.equals(r.name())));
    }

    // Fired, then fired again for a new runAt: the second Fired raises the one Event's count.
    create(admin, task(ns, "again", s -> s.setDelay("0s")));
    step.get().until(() -> phase(admin, ns, "again").orElse(null) == Phase.Fired);
    // Another writer (a replica that has just lost the Lease, say) counts the Event up meanwhile:
    // the version the operator remembers is stale, so its repeat goes the long way (a patch
    // refused, a create refused, a get and a patch).
    DelayedTask again = admin.resources(DelayedTask.class).inNamespace(ns).withName("again").get();
    admin
        .v1()
        .events()
        .inNamespace(ns)
        .withName(TaskEvents.eventName(again, TaskEvents.FIRED))
        .edit(
            event -> {
              event.setCount(event.getCount() + 1);
              return event;
            });
    admin
        .resources(DelayedTask.class)
        .inNamespace(ns)
        .withName("again")
        .edit(
            t -> {
              t.getSpec().setDelay(null);
              t.getSpec().setRunAt(rfc3339(Instant.now().plusSeconds(1)));
              return t;
            });
    step.get()
        .alias("Fired twice, counted three times")
        .until(() -> Events.count(admin, ns, "again", "Fired") == 3);

    // A Job task, to Succeeded.
    create(
        admin,
        task(
            ns,
            "report",
            s -> {
              s.setDelay("0s");
              s.setJobTemplate(busyboxJob());
            }));
    step.get().until(() -> phase(admin, ns, "report").orElse(null) == Phase.Running);
    Job job =
        admin
            .batch()
            .v1()
            .jobs()
            .inNamespace(ns)
            .withName(get(admin, ns, "report").getStatus().getJobName())
            .get();
    JobOutcomes.complete(admin, job);
    step.get().until(() -> phase(admin, ns, "report").orElse(null) == Phase.Succeeded);

    // A foreign Job under the name the task's Job would have: create answers 409, the Job is read.
    Instant due = Instant.now().plusSeconds(5);
    DelayedTask foreign =
        create(
            admin,
            task(
                ns,
                "foreign",
                s -> {
                  s.setRunAt(rfc3339(due));
                  s.setJobTemplate(busyboxJob());
                }));
    String taken =
        JobNames.jobName("foreign", foreign.getMetadata().getUid(), Instant.parse(rfc3339(due)));
    admin
        .batch()
        .v1()
        .jobs()
        .inNamespace(ns)
        .resource(
            new JobBuilder()
                .withNewMetadata()
                .withName(taken)
                .endMetadata()
                .withSpec(busyboxJob().getSpec())
                .build())
        .create();
    step.get().until(() -> phase(admin, ns, "foreign").orElse(null) == Phase.Failed);

    // Deleted after its TTL.
    create(
        admin,
        task(
            ns,
            "short-lived",
            s -> {
              s.setDelay("0s");
              s.setTtlSecondsAfterFinished(1L);
            }));
    step.get().until(() -> get(admin, ns, "short-lived") == null);

    create(
        admin,
        task(ns, "invalid", s -> s.setRunAt("2026-02-30T10:00:00Z"))); // the schema lets it through
    step.get().until(() -> phase(admin, ns, "invalid").orElse(null) == Phase.Invalid);

    create(
        admin,
        task(
            ns,
            "paused",
            s -> {
              s.setDelay("0s");
              s.setSuspend(true);
            }));
    step.get().until(() -> phase(admin, ns, "paused").orElse(null) == Phase.Suspended);
    admin
        .resources(DelayedTask.class)
        .inNamespace(ns)
        .withName("paused")
        .edit(
            t -> {
              t.getSpec().setSuspend(false);
              return t;
            });
    step.get().until(() -> phase(admin, ns, "paused").map(Phase::isFinished).orElse(false));

    // A queue (its pause and limits from the informer) and a task in it: the queue's status is
    // written.
    DelayedTaskQueue queue = new DelayedTaskQueue();
    queue.setMetadata(
        new io.fabric8.kubernetes.api.model.ObjectMetaBuilder()
            .withName("audited")
            .withNamespace(ns)
            .build());
    queue.setSpec(new DelayedTaskQueueSpec());
    admin.resources(DelayedTaskQueue.class).inNamespace(ns).resource(queue).create();
    create(
        admin,
        task(
            ns,
            "queued",
            s -> {
              s.setDelay("0s");
              s.setQueue("audited");
            }));
    step.get().until(() -> phase(admin, ns, "queued").orElse(null) == Phase.Fired);
    step.get()
        .alias("the queue's status")
        .until(
            () -> {
              DelayedTaskQueue written =
                  admin.resources(DelayedTaskQueue.class).inNamespace(ns).withName("audited").get();
              return written.getStatus() != null
                  && Long.valueOf(1).equals(written.getStatus().getDispatchedTotal());
            });

    // A task of an earlier version, with the finalizer those put on: taken off.
    DelayedTask legacy = task(ns, "legacy", s -> s.setDelay("0s"));
    legacy.getMetadata().setFinalizers(List.of(DelayedTaskReconciler.LEGACY_FINALIZER));
    create(admin, legacy);
    step.get().until(() -> get(admin, ns, "legacy").getMetadata().getFinalizers().isEmpty());

    // Sinks: a token for an audience (of the sender ServiceAccount), and a Service ref read.
    admin
        .serviceAccounts()
        .inNamespace(ns)
        .resource(
            new ServiceAccountBuilder()
                .withNewMetadata()
                .withName(env.get(SinkConfig.SERVICE_ACCOUNT))
                .endMetadata()
                .build())
        .create();
    admin
        .secrets()
        .inNamespace(ns)
        .resource(
            new io.fabric8.kubernetes.api.model.SecretBuilder()
                .withNewMetadata()
                .withName(env.get(SinkConfig.SIGNING_SECRET))
                .endMetadata()
                .withStringData(Map.of("orders", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"))
                .build())
        .create();
    create(
        admin,
        task(
            ns,
            "delivered",
            s -> {
              s.setDelay("0s");
              Destination sink = new Destination();
              sink.setUri(receiver.base() + "/rbac");
              sink.setAudience(
                  "orders"); // a token goes only over https (or to a Service of the namespace)
              sink.setCaCerts(receiver.caCertsPem());
              // Signed with the signing Secret, which the operator knows from its informer (list,
              // watch of that name).
              sink.setSigning(new io.delayedtask.operator.api.v1alpha1.Signing("orders"));
              s.setSink(sink);
            }));
    step.get().until(() -> phase(admin, ns, "delivered").orElse(null) == Phase.Succeeded);
    assertThat(receiver.requestsTo("/rbac"))
        .singleElement()
        .satisfies(r -> assertThat(r.header("Authorization")).startsWith("Bearer "))
        .satisfies(r -> assertThat(r.header("webhook-signature")).startsWith("v1,"));
    // Two ports, neither named http: the Service is known from the informers (list, watch), and the
    // sink
    // cannot be resolved (no packet sent).
    admin
        .services()
        .inNamespace(ns)
        .resource(
            new ServiceBuilder()
                .withNewMetadata()
                .withName("two-ports")
                .endMetadata()
                .withNewSpec()
                .addNewPort()
                .withName("a")
                .withPort(8080)
                .endPort()
                .addNewPort()
                .withName("b")
                .withPort(9090)
                .endPort()
                .endSpec()
                .build())
        .create();
    create(
        admin,
        task(
            ns,
            "by-ref",
            s -> {
              s.setDelay("0s");
              Destination sink = new Destination();
              sink.setRef(new ServiceReference("v1", "Service", "two-ports"));
              s.setSink(sink);
            }));
    step.get().until(() -> phase(admin, ns, "by-ref").orElse(null) == Phase.Failed);
  }

  /**
   * Requests the server refused, by the authorizer or by admission with 403 (a check of the
   * authorizer's), counted.
   */
  private static Map<String, Long> refused(List<AuditLog.Request> requests) {
    return requests.stream()
        .filter(r -> r.code() == 403 || r.decision().equals("forbid"))
        .collect(
            Collectors.groupingBy(
                r -> r.verb() + " " + r.uri().replaceFirst("\\?.*", ""),
                TreeMap::new,
                Collectors.counting()));
  }

  /**
   * Fails unless {@code granted} is {@code used}, naming each verb granted and not used, and used
   * and not granted.
   */
  private static void assertGrantsExactly(String what, Set<String> granted, Set<String> used) {
    Set<String> unused = perVerb(granted);
    unused.removeAll(perVerb(used));
    Set<String> missing = perVerb(used);
    missing.removeAll(perVerb(granted));
    assertThat(granted)
        .as("%s; granted, not used: %s; used, not granted: %s", what, unused, missing)
        .isEqualTo(used);
  }

  /** "batch/jobs: create,get" as "batch/jobs create", "batch/jobs get". */
  private static Set<String> perVerb(Set<String> lines) {
    Set<String> each = new TreeSet<>();
    for (String line : lines) {
      int colon = line.lastIndexOf(": ");
      for (String verb : line.substring(colon + 2).split(",")) {
        each.add(line.substring(0, colon) + " " + verb);
      }
    }
    return each;
  }

  /**
   * The requests the release's own bindings allowed, as grants, by section of {@link Rbac#USED}:
   * the ClusterRole's ("operator") and the leader election Role's.
   */
  private static Map<String, Set<String>> usedBySection(
      List<AuditLog.Request> requests, ChartRelease release, Map<String, String> names) {
    Map<String, String> sectionByBinding =
        Map.of(
            release.fullname(),
            Rbac.OPERATOR_SECTION,
            release.fullname() + "-leader-election",
            Rbac.LEADER_ELECTION_SECTION,
            release.fullname() + "-admission-policy",
            Rbac.ADMISSION_POLICY_SECTION);
    Map<String, List<AuditLog.Request>> bySection = new TreeMap<>();
    for (AuditLog.Request request : requests) {
      String section = sectionByBinding.get(binding(request));
      if (section != null) {
        bySection.computeIfAbsent(section, k -> new ArrayList<>()).add(request);
      }
    }
    Map<String, Set<String>> used = new TreeMap<>();
    bySection.forEach((section, allowed) -> used.put(section, Rbac.used(allowed, names)));
    return used;
  }

  /**
   * What the built-in roles allow every authenticated user (discovery, access reviews): no grant of
   * the chart's.
   */
  private static Set<String> byEveryUser(List<AuditLog.Request> requests, ChartRelease release) {
    return requests.stream()
        .filter(r -> !binding(r).startsWith(release.fullname()))
        .map(
            r -> r.verb() + " " + (r.isResource() ? r.target() : r.uri()) + " (" + binding(r) + ")")
        .collect(Collectors.toCollection(TreeSet::new));
  }

  private static String binding(AuditLog.Request request) {
    Matcher matcher = BINDING.matcher(request.reason());
    return matcher.find() ? matcher.group(1) : "";
  }

  private static Map<String, Set<String>> withNotARequest(Map<String, Set<String>> used) {
    Map<String, Set<String>> all = new TreeMap<>();
    Stream.of(used, NOT_A_REQUEST)
        .forEach(
            m ->
                m.forEach(
                    (section, lines) ->
                        all.computeIfAbsent(section, k -> new TreeSet<>()).addAll(lines)));
    all.replaceAll((section, lines) -> Rbac.merge(lines));
    return all;
  }

  private static String asFile(Map<String, Set<String>> sections) {
    StringBuilder text = new StringBuilder();
    sections.forEach(
        (section, lines) -> {
          text.append('[').append(section).append("]\n");
          lines.forEach(line -> text.append(line).append('\n'));
        });
    return text.toString();
  }
}
