package io.delayedtask.operator.cli;

import static io.delayedtask.operator.testing.Tasks.rfc3339;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.delayedtask.operator.api.v1alpha1.Condition;
import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.DelayedTaskSpec;
import io.delayedtask.operator.api.v1alpha1.DelayedTaskStatus;
import io.delayedtask.operator.api.v1alpha1.DeliveryStatus;
import io.delayedtask.operator.api.v1alpha1.Destination;
import io.delayedtask.operator.api.v1alpha1.Phase;
import io.delayedtask.operator.api.v1alpha1.ServiceReference;
import io.delayedtask.operator.testing.KubectlDtProgram;
import io.delayedtask.operator.testing.KubectlDtProgram.Result;
import io.delayedtask.operator.testing.RealKubernetes;
import io.delayedtask.operator.testing.RequiresRealKubernetes;
import io.delayedtask.operator.testing.Tasks;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.ObjectReferenceBuilder;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.api.model.rbac.PolicyRuleBuilder;
import io.fabric8.kubernetes.api.model.rbac.RoleBindingBuilder;
import io.fabric8.kubernetes.api.model.rbac.RoleBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@code kubectl dt} plugin as a user runs it: built, copied as one file onto a PATH of its
 * own, run as {@code kubectl-dt} and through the real {@code kubectl dt} of the control plane,
 * against a real API server. No operator runs here: the tasks get the statuses the operator would
 * write, through the status subresource, so each column can be compared with the objects.
 */
@RequiresRealKubernetes
class KubectlDtIT {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Pattern COUNTDOWN = Pattern.compile("(in|overdue) (\\S+)|(\\S+) ago|-");

  @TempDir static Path tmp;

  private static RealKubernetes kube;
  private static KubernetesClient client;
  private static KubectlDtProgram dt;
  private static String ns;
  private static String other;
  private static Instant base;

  @BeforeAll
  static void start() {
    // First, so a missing Go skips (or fails on CI) before anything starts.
    Path built = KubectlDtProgram.build();
    kube = RealKubernetes.shared();
    client = kube.client();
    dt =
        KubectlDtProgram.install(
            tmp.resolve("bin"), kube.kubeconfig(), kube.binaries().binary("kubectl"));
    assertThat(dt.executable()).hasSameBinaryContentAs(built);
    ns = kube.createNamespace("dt-cli");
    other = kube.createNamespace("dt-cli-other");
    base = Instant.now().truncatedTo(ChronoUnit.SECONDS);

    create(
        ns,
        "fired",
        base.minus(Duration.ofHours(1)),
        s -> {},
        st -> {
          st.setPhase(Phase.Fired);
          st.setFiredTime(rfc3339(base.minus(Duration.ofHours(1))));
          ready(st, "True", "Fired", "fired");
        });
    create(
        ns,
        "retrying",
        base.minus(Duration.ofMinutes(5)),
        s -> s.setSink(service("orders", "/cancel")),
        st -> {
          st.setPhase(Phase.Running);
          st.setFiredTime(rfc3339(base.minus(Duration.ofMinutes(5))));
          st.setSinkUri("http://orders." + ns + ".svc.cluster.local/cancel");
          DeliveryStatus delivery = new DeliveryStatus();
          delivery.setAttempts(2);
          delivery.setResponseCode(503);
          delivery.setNextAttemptTime(rfc3339(base.plus(Duration.ofMinutes(3))));
          st.setDelivery(delivery);
          ready(st, "False", "Running", "running: delivery attempt 2 did not succeed");
        });
    create(
        ns,
        "paused-mail",
        base.minusSeconds(3),
        s -> {
          s.setSink(service("mailer", null));
          s.setQueue("emails");
          s.setStartingDeadlineSeconds(3600L);
        },
        st -> {
          st.setPhase(Phase.Scheduled);
          ready(st, "True", "Scheduled", "scheduled");
          st.getConditions()
              .add(condition("Queued", "True", "QueuePaused", "queue emails is paused"));
        });
    create(
        ns,
        "job-no-policy",
        base.plus(Duration.ofMinutes(10)),
        s -> s.setJobTemplate(Tasks.jobTemplate()),
        st -> {
          st.setPhase(Phase.Scheduled);
          ready(
              st,
              "False",
              "AdmissionPolicyMissing",
              "the admission policy delayedtask-job-author is missing");
        });
    create(
        ns,
        "queued-later",
        base.plus(Duration.ofMinutes(20)),
        s -> s.setQueue("emails"),
        st -> {
          st.setPhase(Phase.Scheduled);
          ready(st, "True", "Scheduled", "scheduled");
        });
    create(
        ns,
        "suspended",
        base.plus(Duration.ofHours(1)),
        s -> s.setSuspend(true),
        st -> {
          st.setPhase(Phase.Suspended);
          ready(st, "True", "Suspended", "suspended: spec.suspend is true, so it does not fire");
        });
    create(
        ns,
        "in-two-hours",
        base.plus(Duration.ofHours(2)),
        s -> {},
        st -> {
          st.setPhase(Phase.Scheduled);
          ready(st, "True", "Scheduled", "scheduled");
        });
    create(
        ns,
        "invalid",
        null,
        s -> s.setTimeZone("Mars/Olympus_Mons"),
        st -> {
          st.setPhase(Phase.Invalid);
          st.setMessage("spec.timeZone Mars/Olympus_Mons is not an IANA time zone");
          ready(st, "False", "Invalid", "invalid");
        });
    create(
        other,
        "elsewhere",
        base.plus(Duration.ofMinutes(5)),
        s -> {},
        st -> {
          st.setPhase(Phase.Scheduled);
          ready(st, "True", "Scheduled", "scheduled");
        });
    applyQueue(ns, "emails", true);
  }

  @Test
  void listShowsTheTasksInDueOrderWithCountdownPhaseKindQueueAndWhyEachWaits() {
    Instant before = Instant.now();
    Result got = dt.run("list", "-n", ns);
    Instant after = Instant.now();
    assertThat(got.ok()).as(got.output()).isTrue();
    List<String> lines = got.lines();
    assertThat(lines.get(0).split("\\s+"))
        .containsExactly("NAME", "DUE", "PHASE", "KIND", "QUEUE", "WAITING");
    Map<String, List<String>> rows = rows(lines);

    // The order is the objects' status.dueTime order, read back from the API server; none last.
    List<DelayedTask> objects =
        new ArrayList<>(client.resources(DelayedTask.class).inNamespace(ns).list().getItems());
    objects.sort(
        Comparator.comparing(
                (DelayedTask t) ->
                    t.getStatus().getDueTime() == null
                        ? Instant.MAX
                        : Instant.parse(t.getStatus().getDueTime()))
            .thenComparing(t -> t.getMetadata().getName()));
    assertThat(rows.keySet())
        .containsExactlyElementsOf(objects.stream().map(t -> t.getMetadata().getName()).toList())
        .containsExactly(
            "fired",
            "retrying",
            "paused-mail",
            "job-no-policy",
            "queued-later",
            "suspended",
            "in-two-hours",
            "invalid");

    // The columns after DUE, as the objects say.
    assertThat(rows.get("fired").subList(1, 5)).containsExactly("Fired", "status", "-", "-");
    assertThat(rows.get("retrying").subList(1, 5))
        .containsExactly("Running", "sink", "-", "Retrying");
    assertThat(rows.get("paused-mail").subList(1, 5))
        .containsExactly("Scheduled", "sink", "emails", "QueuePaused");
    assertThat(rows.get("job-no-policy").subList(1, 5))
        .containsExactly("Scheduled", "job", "-", "AdmissionPolicyMissing");
    assertThat(rows.get("queued-later").subList(1, 5))
        .containsExactly("Scheduled", "status", "emails", "-");
    assertThat(rows.get("suspended").subList(1, 5))
        .containsExactly("Suspended", "status", "-", "Suspended");
    assertThat(rows.get("in-two-hours").subList(1, 5))
        .containsExactly("Scheduled", "status", "-", "-");
    assertThat(rows.get("invalid")).containsExactly("-", "Invalid", "status", "-", "-");

    // The countdown: the due time minus the time of the run, to the unit it prints.
    for (DelayedTask task : objects) {
      String name = task.getMetadata().getName();
      String countdown = rows.get(name).get(0);
      if (task.getStatus().getDueTime() == null) {
        assertThat(countdown).as(name).isEqualTo("-");
        continue;
      }
      Instant due = Instant.parse(task.getStatus().getDueTime());
      boolean fired =
          task.getStatus().getPhase() == Phase.Fired
              || task.getStatus().getPhase() == Phase.Running;
      assertCountdown(name, countdown, due, before, after, fired);
    }
    assertThat(rows.get("paused-mail").get(0)).startsWith("overdue ");
    assertThat(rows.get("fired").get(0)).isEqualTo("1h ago");
    assertThat(rows.get("in-two-hours").get(0)).matches("in (2h|1h59m)");

    // The real kubectl finds the plugin on the PATH and prints the same (countdowns may tick).
    Result viaKubectl = dt.viaKubectl("list", "-n", ns);
    assertThat(viaKubectl.ok()).as(viaKubectl.output()).isTrue();
    assertThat(withoutDue(rows(viaKubectl.lines()))).isEqualTo(withoutDue(rows));

    // -o wide: the due time itself, the Job or URL, the message of what holds the task.
    Result wide = dt.run("list", "-n", ns, "-o", "wide");
    assertThat(wide.ok()).as(wide.output()).isTrue();
    Map<String, List<String>> wideRows = rows(wide.lines());
    // After NAME: DUE, PHASE, KIND, QUEUE, WAITING, then -o wide's DUE-TIME, TARGET, MESSAGE.
    assertThat(wideRows.get("paused-mail").get(5)).isEqualTo(dueTime(base.minusSeconds(3)));
    assertThat(wideRows.get("paused-mail").subList(6, wideRows.get("paused-mail").size()))
        .contains("queue emails is paused");
    assertThat(wideRows.get("retrying").get(6))
        .isEqualTo("http://orders." + ns + ".svc.cluster.local/cancel");
  }

  @Test
  void filtersByQueuePhaseAndDueWithinAndAcrossNamespaces() {
    assertThat(names(dt.run("list", "-n", ns, "--queue", "emails")))
        .containsExactly("paused-mail", "queued-later");
    assertThat(names(dt.run("list", "-n", ns, "--phase", "suspended,Running")))
        .containsExactly("retrying", "suspended");
    // Not yet fired and due within 15 minutes, overdue included; fired and later ones left out.
    assertThat(names(dt.run("list", "-n", ns, "--due-within", "15m")))
        .containsExactly("paused-mail", "job-no-policy");

    Result all = dt.run("list", "-A", "--due-within", "15m");
    assertThat(all.ok()).as(all.output()).isTrue();
    assertThat(all.lines().get(0).split("\\s+")).startsWith("NAMESPACE", "NAME", "DUE");
    List<String> ours =
        all.lines().stream()
            .skip(1)
            .map(l -> l.split("\\s+"))
            .filter(c -> c[0].equals(ns) || c[0].equals(other))
            .map(c -> c[0] + "/" + c[1])
            .toList();
    assertThat(ours)
        .containsExactly(ns + "/paused-mail", other + "/elsewhere", ns + "/job-no-policy");

    Result none = dt.run("list", "-n", ns, "--queue", "nothing-here");
    assertThat(none.ok()).isTrue();
    assertThat(none.stdout()).isEmpty();
    assertThat(none.stderr())
        .contains("No DelayedTasks found in namespace " + ns + " in queue nothing-here");

    Result badPhase = dt.run("list", "-n", ns, "--phase", "Pending");
    assertThat(badPhase.exitCode()).isEqualTo(1);
    assertThat(badPhase.stderr())
        .contains("--phase \"Pending\" is not a phase", "Scheduled, Suspended");
    Result badOutput = dt.run("list", "-n", ns, "-o", "table");
    assertThat(badOutput.exitCode()).isEqualTo(1);
    assertThat(badOutput.stderr())
        .contains("-o \"table\" is not supported: use wide, json or yaml");
  }

  @Test
  void jsonAndYamlAreTheObjectsAsTheApiServerHasThemInDueOrder() throws Exception {
    Result json = dt.run("list", "-n", ns, "-o", "json");
    assertThat(json.ok()).as(json.output()).isTrue();
    JsonNode list = JSON.readTree(json.stdout());
    assertThat(list.get("kind").asText()).isEqualTo("List");
    List<String> order = new ArrayList<>();
    list.get("items").forEach(item -> order.add(item.get("metadata").get("name").asText()));
    assertThat(order).containsExactlyElementsOf(names(dt.run("list", "-n", ns)));

    // Each item equals what kubectl get reads from the API server, field for field.
    RealKubernetes.Kubectl.Result get = kube.kubectl("get", "delayedtasks", "-n", ns, "-o", "json");
    assertThat(get.ok()).as(get.output()).isTrue();
    Map<String, JsonNode> byName = new LinkedHashMap<>();
    JSON.readTree(get.stdout())
        .get("items")
        .forEach(item -> byName.put(item.get("metadata").get("name").asText(), item));
    list.get("items")
        .forEach(
            item ->
                assertThat(item).isEqualTo(byName.get(item.get("metadata").get("name").asText())));

    Result yaml = dt.run("list", "-n", ns, "-o", "yaml");
    assertThat(yaml.ok()).as(yaml.output()).isTrue();
    assertThat(new YAMLMapper().readTree(yaml.stdout())).isEqualTo(list);
  }

  @Test
  void whyExplainsWhatHoldsATaskAndShowsItsConditionsAndEvents() {
    DelayedTask task = Tasks.get(client, ns, "paused-mail");
    client
        .v1()
        .events()
        .inNamespace(ns)
        .resource(
            new EventBuilder()
                .withMetadata(new ObjectMetaBuilder().withName("paused-mail.queued").build())
                .withInvolvedObject(
                    new ObjectReferenceBuilder()
                        .withApiVersion("delayedtask.io/v1alpha1")
                        .withKind("DelayedTask")
                        .withNamespace(ns)
                        .withName("paused-mail")
                        .withUid(task.getMetadata().getUid())
                        .build())
                .withType("Normal")
                .withReason("Queued")
                .withMessage("waits: queue emails is paused")
                .withCount(3)
                .withFirstTimestamp(rfc3339(base.minusSeconds(60)))
                .withLastTimestamp(rfc3339(base.minusSeconds(2)))
                .build())
        .create();

    Result why = dt.viaKubectl("why", "paused-mail", "-n", ns);
    assertThat(why.ok()).as(why.output()).isTrue();
    assertThat(why.stdout())
        .contains(
            "DelayedTask " + ns + "/paused-mail (sink) is Scheduled.",
            "Due: " + task.getStatus().getDueTime() + ", overdue ",
            "Action: it sends a CloudEvent to Service mailer, up to 4 attempts",
            "Queue: emails: paused (none of its tasks fires; kubectl dt resume-queue emails -n "
                + ns
                + ")",
            "It waits in it now (QueuePaused): queue emails is paused",
            "Deadline: spec.startingDeadlineSeconds 3600",
            "Conditions:",
            "Last Events:");
    assertThat(why.stdout())
        .containsPattern("\\n  Queued +True +QueuePaused +\\S+ ago +queue emails is paused\\n")
        .containsPattern("\\n  \\S+ ago +Normal +Queued +3 +waits: queue emails is paused\\n");

    assertThat(dt.run("why", "job-no-policy", "-n", ns).stdout())
        .contains(
            "Action: it will create a Job from spec.jobTemplate.",
            "Held: the admission policy is missing, so the operator creates no Job and sends no token (AdmissionPolicyMissing)");
    assertThat(dt.run("why", "suspended", "-n", ns).stdout())
        .contains(
            "Held: spec.suspend is true, so it does not fire (kubectl dt resume suspended -n "
                + ns);
    assertThat(dt.run("why", "retrying", "-n", ns).stdout())
        .contains(
            "Retries: attempt 2 got answer 503; the next attempt is at "
                + rfc3339(base.plus(Duration.ofMinutes(3))));
    assertThat(dt.run("why", "in-two-hours", "-n", ns).stdout())
        .contains("Held: nothing; it fires at its due time.");
  }

  @Test
  void fireNowSetsTheAnnotationToTheTimeOfTheRequestAndRefusesAFiredTask() {
    create(
        other,
        "fire-me",
        base.plus(Duration.ofDays(1)),
        s -> s.setSuspend(true),
        st -> {
          st.setPhase(Phase.Suspended);
          ready(st, "True", "Suspended", "suspended");
        });
    Instant before = Instant.now().truncatedTo(ChronoUnit.MILLIS);
    Result fired = dt.viaKubectl("fire-now", "fire-me", "-n", other);
    Instant after = Instant.now();
    assertThat(fired.ok()).as(fired.output()).isTrue();
    String value =
        Tasks.get(client, other, "fire-me")
            .getMetadata()
            .getAnnotations()
            .get("delayedtask.io/fire-now");
    assertThat(fired.stdout())
        .isEqualTo(
            "delayedtask.delayedtask.io/fire-me fire-now requested (delayedtask.io/fire-now="
                + value
                + ")\n");
    assertThat(value).matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z");
    assertThat(OffsetDateTime.parse(value).toInstant()).isBetween(before, after);

    Result refused = dt.run("fire-now", "fired", "-n", ns);
    assertThat(refused.exitCode()).as(refused.output()).isEqualTo(1);
    assertThat(refused.stderr())
        .contains(
            "DelayedTask " + ns + "/fired has already fired for its due time (Fired)",
            "change spec.runAt or spec.delay");
    assertThat(Tasks.get(client, ns, "fired").getMetadata().getAnnotations()).isNullOrEmpty();
  }

  @Test
  void suspendAndResumePatchSpecSuspend() {
    create(
        other,
        "toggle",
        base.plus(Duration.ofDays(1)),
        s -> {},
        st -> {
          st.setPhase(Phase.Scheduled);
          ready(st, "True", "Scheduled", "scheduled");
        });
    Result suspended = dt.run("suspend", "toggle", "-n", other);
    assertThat(suspended.stdout())
        .as(suspended.output())
        .isEqualTo("delayedtask.delayedtask.io/toggle suspended\n");
    assertThat(Tasks.get(client, other, "toggle").getSpec().getSuspend()).isTrue();
    Result resumed = dt.viaKubectl("resume", "toggle", "-n", other);
    assertThat(resumed.stdout())
        .as(resumed.output())
        .isEqualTo("delayedtask.delayedtask.io/toggle resumed\n");
    assertThat(Tasks.get(client, other, "toggle").getSpec().getSuspend()).isFalse();
  }

  @Test
  void pauseAndResumeQueuePatchSpecPaused() throws Exception {
    applyQueue(ns, "bulk", false);
    Result paused = dt.run("pause", "bulk", "-n", ns);
    assertThat(paused.stdout())
        .as(paused.output())
        .isEqualTo("delayedtaskqueue.delayedtask.io/bulk paused\n");
    assertThat(queuePaused("bulk")).isTrue();
    Result resumed = dt.viaKubectl("resume-queue", "bulk", "-n", ns);
    assertThat(resumed.stdout())
        .as(resumed.output())
        .isEqualTo("delayedtaskqueue.delayedtask.io/bulk resumed\n");
    assertThat(queuePaused("bulk")).isFalse();
  }

  @Test
  void errorsSayWhatIsMissingAndTheFix() {
    Result noTask = dt.run("why", "nope", "-n", ns);
    assertThat(noTask.exitCode()).isEqualTo(1);
    assertThat(noTask.stderr())
        .isEqualTo(
            "error: DelayedTask \"nope\" not found in namespace \""
                + ns
                + "\" (kubectl dt list -n "
                + ns
                + " lists the tasks there; kubectl dt list -A, every namespace)\n");
    Result noQueue = dt.run("pause", "nope", "-n", ns);
    assertThat(noQueue.exitCode()).isEqualTo(1);
    assertThat(noQueue.stderr())
        .contains(
            "DelayedTaskQueue \"nope\" not found in namespace \"" + ns + "\"",
            "kubectl get delayedtaskqueues -n " + ns);
    // Several names: each failure on its own line, the others done, exit 1.
    Result some = dt.run("resume", "nope", "in-two-hours", "-n", ns);
    assertThat(some.exitCode()).isEqualTo(1);
    assertThat(some.stdout()).isEqualTo("delayedtask.delayedtask.io/in-two-hours resumed\n");
    assertThat(some.stderr()).contains("DelayedTask \"nope\" not found");

    // A user who may read tasks but not patch them: told which right is missing and how to check.
    client
        .serviceAccounts()
        .inNamespace(ns)
        .resource(
            new ServiceAccountBuilder().withNewMetadata().withName("viewer").endMetadata().build())
        .create();
    client
        .rbac()
        .roles()
        .inNamespace(ns)
        .resource(
            new RoleBuilder()
                .withNewMetadata()
                .withName("dt-viewer")
                .endMetadata()
                .withRules(
                    new PolicyRuleBuilder()
                        .withApiGroups("delayedtask.io")
                        .withResources("delayedtasks")
                        .withVerbs("get", "list")
                        .build())
                .build())
        .create();
    client
        .rbac()
        .roleBindings()
        .inNamespace(ns)
        .resource(
            new RoleBindingBuilder()
                .withNewMetadata()
                .withName("dt-viewer")
                .endMetadata()
                .withNewRoleRef("rbac.authorization.k8s.io", "Role", "dt-viewer")
                .addNewSubject()
                .withKind("ServiceAccount")
                .withName("viewer")
                .withNamespace(ns)
                .endSubject()
                .build())
        .create();
    Path viewer = kube.serviceAccountKubeconfig(ns, "viewer", tmp.resolve("viewer.kubeconfig"));
    Result listed = dt.run(viewer, "list");
    assertThat(listed.ok()).as(listed.output()).isTrue();
    assertThat(names(listed)).contains("suspended");
    Result forbidden = dt.run(viewer, "resume", "suspended");
    assertThat(forbidden.exitCode()).isEqualTo(1);
    assertThat(forbidden.stderr())
        .contains(
            "is forbidden",
            "system:serviceaccount:" + ns + ":viewer",
            "kubectl dt needs patch on delayedtasks.delayedtask.io in namespace \"" + ns + "\"",
            "the aggregated \"edit\" ClusterRole",
            "kubectl auth can-i patch delayedtasks.delayedtask.io -n " + ns);
    assertThat(Tasks.get(client, ns, "suspended").getSpec().getSuspend()).isTrue();
  }

  @Test
  void everyCommandHasHelp() {
    Result root = dt.viaKubectl("--help");
    assertThat(root.ok()).as(root.output()).isTrue();
    for (String command :
        List.of("list", "why", "fire-now", "suspend", "resume", "pause", "resume-queue")) {
      assertThat(root.stdout()).contains("\n  " + command + " ");
      Result help = dt.run(command, "--help");
      assertThat(help.ok()).as(help.output()).isTrue();
      assertThat(help.stdout())
          .as(command)
          .contains("Usage:\n  kubectl dt " + command, "Examples:", "--namespace");
    }
  }

  @Test
  void theGoUnitTestsPass() {
    Result test = KubectlDtProgram.goTest();
    assertThat(test.ok()).as(test.output()).isTrue();
  }

  // --- helpers

  private static void create(
      String namespace,
      String name,
      Instant due,
      Consumer<DelayedTaskSpec> spec,
      Consumer<DelayedTaskStatus> status) {
    DelayedTask task =
        Tasks.task(
            namespace,
            name,
            s -> {
              s.setRunAt(rfc3339(due != null ? due : base));
              spec.accept(s);
            });
    DelayedTask created =
        client.resources(DelayedTask.class).inNamespace(namespace).resource(task).create();
    DelayedTaskStatus st = new DelayedTaskStatus();
    st.setObservedGeneration(created.getMetadata().getGeneration());
    if (due != null) {
      st.setDueTime(dueTime(due));
    }
    status.accept(st);
    created.setStatus(st);
    client.resources(DelayedTask.class).inNamespace(namespace).resource(created).updateStatus();
  }

  /** As the operator writes status times: UTC, always three fraction digits. */
  private static String dueTime(Instant instant) {
    return DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'")
        .withZone(ZoneOffset.UTC)
        .format(instant);
  }

  private static void ready(DelayedTaskStatus status, String value, String reason, String message) {
    status.getConditions().add(condition("Ready", value, reason, message));
  }

  private static Condition condition(String type, String value, String reason, String message) {
    return new Condition(type, value, reason, message, rfc3339(base.minusSeconds(30)), 1L);
  }

  private static Destination service(String name, String uri) {
    ServiceReference ref = new ServiceReference();
    ref.setApiVersion("v1");
    ref.setKind("Service");
    ref.setName(name);
    Destination sink = new Destination();
    sink.setRef(ref);
    sink.setUri(uri);
    return sink;
  }

  private static void applyQueue(String namespace, String name, boolean paused) {
    String yaml =
        """
        apiVersion: delayedtask.io/v1alpha1
        kind: DelayedTaskQueue
        metadata: {name: %s, namespace: %s}
        spec: {maxDispatchesPerSecond: 20, maxConcurrentDispatches: 10, paused: %s}
        """
            .formatted(name, namespace, paused);
    RealKubernetes.Kubectl.Result applied =
        kube.kubectl(kube.kubeconfig()).run(Duration.ofSeconds(60), yaml, "apply", "-f", "-");
    assertThat(applied.ok()).as(applied.output()).isTrue();
  }

  private static boolean queuePaused(String name) throws Exception {
    RealKubernetes.Kubectl.Result got =
        kube.kubectl("get", "delayedtaskqueue", name, "-n", ns, "-o", "json");
    assertThat(got.ok()).as(got.output()).isTrue();
    return JSON.readTree(got.stdout()).get("spec").get("paused").asBoolean();
  }

  /** The table's rows by name: the columns after NAME, split where the columns are (2+ spaces). */
  private static Map<String, List<String>> rows(List<String> lines) {
    Map<String, List<String>> rows = new LinkedHashMap<>();
    for (String line : lines.subList(1, lines.size())) {
      String[] columns = line.trim().split("\\s{2,}");
      rows.put(columns[0], List.of(columns).subList(1, columns.length));
    }
    return rows;
  }

  private static Map<String, List<String>> withoutDue(Map<String, List<String>> rows) {
    Map<String, List<String>> out = new LinkedHashMap<>();
    rows.forEach((name, columns) -> out.put(name, columns.subList(1, columns.size())));
    return out;
  }

  private static List<String> names(Result result) {
    assertThat(result.ok()).as(result.output()).isTrue();
    return List.copyOf(rows(result.lines()).keySet());
  }

  /**
   * A countdown ("in 4m12s", "overdue 3s", "1h ago") read back to seconds agrees with the due time
   * minus the time of the run, within the unit it prints in.
   */
  private static void assertCountdown(
      String name, String countdown, Instant due, Instant before, Instant after, boolean fired) {
    Matcher m = COUNTDOWN.matcher(countdown);
    assertThat(m.matches()).as("%s: countdown %s", name, countdown).isTrue();
    long shown;
    long unit;
    if (m.group(1) != null) {
      long seconds = seconds(m.group(2));
      unit = unit(m.group(2));
      shown = m.group(1).equals("in") ? seconds : -seconds;
      assertThat(fired && m.group(1).equals("overdue"))
          .as("%s: a fired task is never overdue", name)
          .isFalse();
    } else {
      assertThat(fired).as("%s: \"ago\" only for a task that fired", name).isTrue();
      shown = -seconds(m.group(3));
      unit = unit(m.group(3));
    }
    long earliest = Duration.between(after, due).getSeconds() - unit - 1;
    long latest = Duration.between(before, due).getSeconds() + unit + 1;
    assertThat(shown)
        .as(
            "%s: countdown %s for due %s, run between %s and %s",
            name, countdown, due, before, after)
        .isBetween(earliest, latest);
  }

  private static long seconds(String duration) {
    Matcher part = Pattern.compile("(\\d+)([dhms])").matcher(duration);
    long total = 0;
    while (part.find()) {
      long n = Long.parseLong(part.group(1));
      total +=
          switch (part.group(2)) {
            case "d" -> n * 86400;
            case "h" -> n * 3600;
            case "m" -> n * 60;
            default -> n;
          };
    }
    return total;
  }

  /**
   * What the printed duration rounds to: seconds below an hour, minutes below a day, then hours.
   */
  private static long unit(String duration) {
    return duration.contains("d") ? 3600 : duration.contains("h") ? 60 : 1;
  }
}
