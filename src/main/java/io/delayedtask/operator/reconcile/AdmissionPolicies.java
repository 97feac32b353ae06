package io.delayedtask.operator.reconcile;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.task.cache.CachedObjects;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.LabelSelectorRequirement;
import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import io.fabric8.kubernetes.api.model.ManagedFieldsEntry;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.MatchResources;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicy;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicyBinding;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether the admission policy that checks a task's author (docs/reference.md, "No task does what
 * its author may not") is in force, and whether a task's spec went through it. The operator acts
 * with its own rights at the due time, so it fails closed: a task with a {@code jobTemplate} or a
 * {@code sink.audience} creates no Job and sends no token while the policy is missing ({@link
 * #missing()}), nor ever for a spec written while it was missing ({@link Verdict.NotAdmitted})
 * until that spec is written again.
 *
 * <p><b>Present, by content.</b> Each ValidatingAdmissionPolicyBinding named in {@code
 * DELAYEDTASK_ADMISSION_POLICY} must exist, deny, take no parameter, apply to every namespace the
 * operator watches, and bind a policy that fails closed ({@code failurePolicy: Fail}) and whose
 * rules equal one this operator ships ({@link ShippedPolicies}); together they must cover every
 * shipped policy. A name is not trusted: a policy rewritten to match nothing, or a binding that
 * only warns, counts as missing.
 *
 * <p><b>Written while present.</b> Everything that decides it is set by the API server or written
 * by cluster admins, never by a tenant:
 *
 * <ul>
 *   <li>{@code since}: when the policy's current objects took their present form, the latest of the
 *       bindings' and policies' {@code creationTimestamp} and {@code managedFields} times
 *       (cluster-scoped objects that only cluster admins write). A deletion and re-creation, or an
 *       edit to Warn and back, moves it.
 *   <li>A task created at or after {@code since} (whole seconds, {@link #GRACE}) had every spec
 *       write checked by the policy as it is now.
 *   <li>Otherwise the task's {@code status.admission} must carry the operator's record of its
 *       current {@code metadata.generation}: the generation and an HMAC of (uid, generation) under
 *       a key derived from the uid of the DelayedTask CRD, which tenants cannot read. The operator
 *       writes it only for a generation it has judged admitted, so it survives restarts and policy
 *       re-creations, and a tenant who could write the status while the policy was missing cannot
 *       forge one or reuse another task's.
 *   <li>Or the generation is newer than the one a consistent list, made a second after {@code
 *       since}, found: it was written after the policy was in force (a write the operator has not
 *       yet recorded when it restarts counts as not admitted: fail closed).
 * </ul>
 *
 * Until the informers have listed, the policy counts as missing (closed, not open).
 */
public final class AdmissionPolicies implements AutoCloseable {
  /** Prometheus: {@code delayedtask_admission_policy_present} 1 or 0. */
  public static final String PRESENT_METRIC = "delayedtask.admission.policy.present";

  /**
   * How long after the policy's objects change the API server is taken to enforce them. Times are
   * in whole seconds, so a task created in the same second as the change counts as created after it
   * (a script that applies the policy and then a task must not find it refused); a gap closed in
   * the very second its task was written is the residual risk (docs/design.md).
   */
  public static final Duration GRACE = Duration.ZERO;

  /**
   * How long after the policy's objects change the list of the tasks is made: past their second.
   */
  private static final Duration LIST_AFTER = Duration.ofMillis(1500);

  private static final Logger LOG = LoggerFactory.getLogger(AdmissionPolicies.class);
  private static final String CRD = HasMetadata.getFullResourceName(DelayedTask.class);

  /** What the policy's state makes of one task. */
  public sealed interface Verdict {
    /** It may fire; {@code record} is the status.admission to write (empty: none needed). */
    record Admitted(Optional<String> record) implements Verdict {}

    /** The policy counts as missing (or its state is still being read): wait. */
    record Missing(String why) implements Verdict {}

    /**
     * Its current spec was written while the policy was missing: never fires until written again.
     */
    record NotAdmitted(String why) implements Verdict {}
  }

  /** The policy in force: since when, and the identity of its objects (uids). */
  record Present(Instant since, String objects) {}

  private final List<String> required;
  private final ShippedPolicies shipped;
  private final Set<String> namespaces;
  private final KubernetesClient client;
  private final SharedIndexInformer<ValidatingAdmissionPolicyBinding> bindings;
  private final SharedIndexInformer<ValidatingAdmissionPolicy> policies;
  private final Clock clock;
  private final ScheduledExecutorService background;
  private final AtomicBoolean listing = new AtomicBoolean();
  private volatile byte[] key;
  private volatile Baseline baseline;
  private volatile Optional<String> lastLogged = Optional.empty();

  /**
   * The generation of every task, read by a consistent list made while {@code present} was in
   * force.
   */
  private record Baseline(Present present, Map<String, Long> generations) {}

  private AdmissionPolicies(
      List<String> required,
      ShippedPolicies shipped,
      Set<String> namespaces,
      KubernetesClient client,
      SharedIndexInformer<ValidatingAdmissionPolicyBinding> bindings,
      SharedIndexInformer<ValidatingAdmissionPolicy> policies,
      Clock clock) {
    this.required = List.copyOf(required);
    this.shipped = shipped;
    this.namespaces = Set.copyOf(namespaces);
    this.client = client;
    this.bindings = bindings;
    this.policies = policies;
    this.clock = clock;
    this.background =
        client == null
            ? null
            : Executors.newSingleThreadScheduledExecutor(
                r -> {
                  Thread t = new Thread(r, "admission-policy");
                  t.setDaemon(true);
                  return t;
                });
  }

  /**
   * The bindings this check requires, each with its policy; never empty (use {@link #unchecked()}).
   *
   * @param senderServiceAccount the sender ServiceAccount the author-rights policy must name
   * @param signingSecret the signing Secret the author-rights policy must name
   * @param namespaces the namespaces the operator watches (empty: all)
   */
  public static AdmissionPolicies watch(
      KubernetesClient client,
      List<String> required,
      String senderServiceAccount,
      String signingSecret,
      Set<String> namespaces,
      MeterRegistry registry) {
    if (required.isEmpty()) {
      throw new IllegalArgumentException("no binding to watch: use AdmissionPolicies.unchecked()");
    }
    SharedIndexInformer<ValidatingAdmissionPolicyBinding> bindings =
        client.admissionRegistration().v1().validatingAdmissionPolicyBindings().runnableInformer(0);
    SharedIndexInformer<ValidatingAdmissionPolicy> policies =
        client.admissionRegistration().v1().validatingAdmissionPolicies().runnableInformer(0);
    AdmissionPolicies watch =
        new AdmissionPolicies(
            required,
            ShippedPolicies.load(senderServiceAccount, signingSecret),
            namespaces,
            client,
            bindings,
            policies,
            Clock.systemUTC());
    ResourceEventHandler<Object> logChange =
        new ResourceEventHandler<>() {
          @Override
          public void onAdd(Object obj) {
            watch.logIfChanged();
          }

          @Override
          public void onUpdate(Object oldObj, Object newObj) {
            watch.logIfChanged();
          }

          @Override
          public void onDelete(Object obj, boolean deletedFinalStateUnknown) {
            watch.logIfChanged();
          }
        };
    for (SharedIndexInformer<?> informer : List.of(bindings, policies)) {
      // Keep trying: an API server without the kinds, or a missing RBAC rule, leaves the policy
      // missing (tasks wait) and says so in the log, instead of stopping the informer for good.
      informer.exceptionHandler(
          (started, t) -> {
            LOG.warn(
                "Watching {} failed (the admission policy counts as missing until it works): {}",
                informer.getApiTypeClass().getSimpleName(),
                t.toString());
            return true;
          });
      informer.addEventHandler(logChange);
      informer.start().whenComplete((ok, failure) -> watch.logIfChanged());
    }
    // In the background: with the API server unreachable, a read here would hold the start (and
    // /readyz) through the client's retries.
    watch.background.execute(watch::readKey);
    Gauge.builder(PRESENT_METRIC, watch, w -> w.missing().isPresent() ? 0 : 1)
        .description(
            "1 while every ValidatingAdmissionPolicyBinding of DELAYEDTASK_ADMISSION_POLICY denies with the "
                + "policy this operator ships (compared by content); 0 while one is missing (tasks with a jobTemplate or a "
                + "sink.audience wait)")
        .register(registry);
    return watch;
  }

  /** {@code DELAYEDTASK_ADMISSION_POLICY=none}: no check, and no metric. */
  public static AdmissionPolicies unchecked() {
    return new AdmissionPolicies(List.of(), null, Set.of(), null, null, null, Clock.systemUTC());
  }

  /** Why the policy counts as missing now; empty while it is in force (or not checked). */
  public Optional<String> missing() {
    return state().left();
  }

  /** What the policy's state makes of this task now. */
  public Verdict judge(DelayedTask task) {
    if (required.isEmpty() || !needsPolicy(task)) {
      return new Verdict.Admitted(Optional.empty());
    }
    Either state = state();
    if (state.left().isPresent()) {
      return new Verdict.Missing(state.left().get());
    }
    Present present = state.right();
    Baseline known = baseline;
    Optional<Map<String, Long>> generations =
        known != null && known.present().equals(present)
            ? Optional.of(known.generations())
            : Optional.empty();
    Verdict verdict = judge(task, present, Optional.ofNullable(key), generations);
    if (verdict instanceof Verdict.Missing) {
      startBaseline(present);
    }
    return verdict;
  }

  /**
   * Only a jobTemplate or a sink.audience makes the operator act with rights its author may lack.
   */
  static boolean needsPolicy(DelayedTask task) {
    return task.getSpec() != null
        && (task.getSpec().getJobTemplate() != null
            || (task.getSpec().getSink() != null
                && task.getSpec().getSink().getAudience() != null));
  }

  /**
   * The verdict on a task while the policy is in force since {@code present}.
   *
   * @param key the record's key (empty: the CRD could not be read, no record is made or believed)
   * @param baseline the generations a consistent list found after the policy came into force
   *     (empty: not listed yet)
   */
  static Verdict judge(
      DelayedTask task,
      Present present,
      Optional<byte[]> key,
      Optional<Map<String, Long>> baseline) {
    String uid = task.getMetadata().getUid();
    Long generation = task.getMetadata().getGeneration();
    Optional<String> record = key.map(k -> record(k, uid, generation));
    String written = task.getStatus() == null ? null : task.getStatus().getAdmission();
    if (record.isPresent() && record.get().equals(written)) {
      return new Verdict.Admitted(record);
    }
    Instant created = time(task.getMetadata().getCreationTimestamp());
    if (created != null && !created.isBefore(present.since().plus(GRACE))) {
      return new Verdict.Admitted(record);
    }
    if (baseline.isEmpty()) {
      return new Verdict.Missing(
          "the operator is checking which tasks were written while the admission policy was "
              + "missing (a list of the tasks, made once the policy has been in force for a second)");
    }
    Long listed = baseline.get().get(uid);
    if (listed != null && generation != null && generation > listed) {
      return new Verdict.Admitted(record);
    }
    return new Verdict.NotAdmitted(
        "its spec (generation "
            + generation
            + ") was written while the admission policy "
            + "was missing or before its current form ("
            + present.since()
            + "), so its author's rights were never "
            + "checked: no Job is created and no token sent for it. Write the task again (any change to its spec, or "
            + "delete and create it) to put it through the policy");
  }

  /** The status.admission that records {@code generation} of task {@code uid} as admitted. */
  static String record(byte[] key, String uid, Long generation) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(key, "HmacSHA256"));
      byte[] sum = mac.doFinal((uid + "/" + generation).getBytes(StandardCharsets.UTF_8));
      return generation + "." + Base64.getUrlEncoder().withoutPadding().encodeToString(sum);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HmacSHA256 is not available", e);
    }
  }

  /**
   * The records' key: from the DelayedTask CRD's uid, which lives as long as the tasks and tenants
   * cannot read.
   */
  static byte[] key(String crdUid) {
    try {
      return MessageDigest.getInstance("SHA-256")
          .digest(("delayedtask.io/admission/" + crdUid).getBytes(StandardCharsets.UTF_8));
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("SHA-256 is not available", e);
    }
  }

  /** Either why the policy counts as missing, or since when it is in force. */
  record Either(Optional<String> left, Present right) {}

  private Either state() {
    if (required.isEmpty()) {
      return new Either(Optional.empty(), new Present(Instant.EPOCH, ""));
    }
    if (!bindings.hasSynced() || !policies.hasSynced()) {
      return new Either(
          Optional.of(
              "the admission policy's bindings ("
                  + String.join(", ", required)
                  + ") have not "
                  + "been listed yet (the API server has no ValidatingAdmissionPolicy, or the operator may not list them)"),
          null);
    }
    return state(
        required,
        name -> bindings.getStore().getByKey(name),
        name -> policies.getStore().getByKey(name),
        shipped,
        namespaces);
  }

  /**
   * Whether the required bindings are all in force, by content; when not, why, as one sentence for
   * the task's condition and Event (the first thing found wrong).
   *
   * @param namespaces the namespaces the operator watches (empty: all)
   */
  static Either state(
      List<String> required,
      Function<String, ValidatingAdmissionPolicyBinding> bindingNamed,
      Function<String, ValidatingAdmissionPolicy> policyNamed,
      ShippedPolicies shipped,
      Set<String> namespaces) {
    Set<String> covered = new HashSet<>();
    Instant since = Instant.EPOCH;
    Set<String> uids = new TreeSet<>();
    for (String name : required) {
      ValidatingAdmissionPolicyBinding binding = bindingNamed.apply(name);
      if (binding == null) {
        return missing("the ValidatingAdmissionPolicyBinding " + name + " is missing");
      }
      String policyName = binding.getSpec() == null ? null : binding.getSpec().getPolicyName();
      ValidatingAdmissionPolicy policy = policyName == null ? null : policyNamed.apply(policyName);
      if (policy == null) {
        return missing(
            "the ValidatingAdmissionPolicy "
                + policyName
                + " that binding "
                + name
                + " binds is missing");
      }
      List<String> actions = binding.getSpec().getValidationActions();
      if (actions == null || !actions.contains("Deny")) {
        return missing(
            "the ValidatingAdmissionPolicyBinding "
                + name
                + " does not deny (validationActions "
                + actions
                + ")");
      }
      if (binding.getSpec().getParamRef() != null) {
        return missing(
            "the ValidatingAdmissionPolicyBinding "
                + name
                + " takes a paramRef, which no shipped binding "
                + "does");
      }
      Optional<String> narrowed = narrowed(binding.getSpec().getMatchResources(), namespaces);
      if (narrowed.isPresent()) {
        return missing("the ValidatingAdmissionPolicyBinding " + name + " " + narrowed.get());
      }
      String failurePolicy = policy.getSpec() == null ? null : policy.getSpec().getFailurePolicy();
      if (failurePolicy != null && !"Fail".equals(failurePolicy)) {
        return missing(
            "the ValidatingAdmissionPolicy "
                + policyName
                + " has failurePolicy "
                + failurePolicy
                + ", not Fail (an error in it would admit the task)");
      }
      Optional<String> match = shipped.match(policy);
      if (match.isEmpty()) {
        return missing(
            "the ValidatingAdmissionPolicy "
                + policyName
                + " that binding "
                + name
                + " binds is not one "
                + "this operator ships: its matchConstraints, matchConditions, variables or validation expressions "
                + "differ from "
                + ShippedPolicies.RESOURCE.substring(ShippedPolicies.RESOURCE.lastIndexOf('/') + 1)
                + " of this version");
      }
      covered.add(match.get());
      for (HasMetadata object : List.of(binding, policy)) {
        since = latest(since, object.getMetadata());
        uids.add(object.getMetadata().getUid());
      }
    }
    for (String name : shipped.names()) {
      if (!covered.contains(name)) {
        return missing(
            "no binding of DELAYEDTASK_ADMISSION_POLICY ("
                + String.join(", ", required)
                + ") binds the "
                + "policy this operator ships as "
                + name);
      }
    }
    return new Either(Optional.empty(), new Present(since, String.join(",", uids)));
  }

  /**
   * Why a binding's matchResources leaves out tasks the operator watches; empty when it leaves out
   * none.
   */
  static Optional<String> narrowed(MatchResources match, Set<String> namespaces) {
    if (match == null) {
      return Optional.empty();
    }
    Object rest =
        ShippedPolicies.withoutDefaults(
            new io.fabric8.kubernetes.client.utils.KubernetesSerialization()
                .convertValue(
                    new io.fabric8.kubernetes.api.model.admissionregistration.v1
                            .MatchResourcesBuilder(match)
                        .withNamespaceSelector(null)
                        .build(),
                    Map.class));
    boolean onlyNamespaces = rest instanceof Map<?, ?> m && m.isEmpty();
    if (match.getNamespaceSelector() == null
        || (match.getNamespaceSelector().getMatchLabels() == null
                || match.getNamespaceSelector().getMatchLabels().isEmpty())
            && (match.getNamespaceSelector().getMatchExpressions() == null
                || match.getNamespaceSelector().getMatchExpressions().isEmpty())) {
      return onlyNamespaces
          ? Optional.empty()
          : Optional.of(
              "narrows what it matches (matchResources), which no "
                  + "shipped binding of this policy does");
    }
    List<LabelSelectorRequirement> expressions = match.getNamespaceSelector().getMatchExpressions();
    boolean byName =
        onlyNamespaces
            && (match.getNamespaceSelector().getMatchLabels() == null
                || match.getNamespaceSelector().getMatchLabels().isEmpty())
            && expressions != null
            && expressions.size() == 1
            && "kubernetes.io/metadata.name".equals(expressions.get(0).getKey())
            && "In".equals(expressions.get(0).getOperator());
    if (!byName
        || namespaces.isEmpty()
        || !expressions.get(0).getValues().containsAll(namespaces)) {
      return Optional.of(
          "does not apply to every namespace the operator watches ("
              + (namespaces.isEmpty() ? "all" : String.join(", ", new TreeSet<>(namespaces)))
              + "): only a namespaceSelector on kubernetes.io/metadata.name "
              + "In those namespaces may narrow it");
    }
    return Optional.empty();
  }

  private static Instant latest(Instant since, ObjectMeta metadata) {
    Instant latest = since;
    List<String> times = new ArrayList<>();
    times.add(metadata.getCreationTimestamp());
    if (metadata.getManagedFields() != null) {
      for (ManagedFieldsEntry entry : metadata.getManagedFields()) {
        times.add(entry.getTime());
      }
    }
    for (String text : times) {
      Instant t = time(text);
      if (t != null && t.isAfter(latest)) {
        latest = t;
      }
    }
    return latest;
  }

  private static Instant time(String text) {
    try {
      return text == null ? null : Instant.parse(text);
    } catch (DateTimeParseException e) {
      return null;
    }
  }

  private static Either missing(String what) {
    return new Either(
        Optional.of(
            what
                + ", so no Job is created, no token sent and nothing signed for this task: restore it (helm "
                + "upgrade with admissionPolicy.enabled=true, or kubectl apply -f k8s/15-admission-policy.yaml), or set "
                + "DELAYEDTASK_ADMISSION_POLICY to the bindings in use (none: no check, at the installer's risk)"),
        null);
  }

  /** Reads the CRD's uid once (retrying every 30 s): until then no record is made or believed. */
  private void readKey() {
    try {
      CustomResourceDefinition crd =
          client.apiextensions().v1().customResourceDefinitions().withName(CRD).get();
      if (crd != null && crd.getMetadata().getUid() != null) {
        key = key(crd.getMetadata().getUid());
        return;
      }
      LOG.warn(
          "The CustomResourceDefinition {} was not found: admission records are not made until it is",
          CRD);
    } catch (RuntimeException e) {
      LOG.warn(
          "Reading the CustomResourceDefinition {} failed (admission records are not made until it works): {}",
          CRD,
          e.toString());
    }
    background.schedule(this::readKey, 30, TimeUnit.SECONDS);
  }

  /** Lists the tasks once the policy has been in force for {@link #GRACE}, in the background. */
  private void startBaseline(Present present) {
    if (background == null || !listing.compareAndSet(false, true)) {
      return;
    }
    long wait =
        Math.max(0, Duration.between(clock.instant(), present.since().plus(LIST_AFTER)).toMillis());
    background.schedule(
        () -> {
          try {
            Either now = state();
            if (now.left().isPresent() || !now.right().equals(present)) {
              return;
            }
            Map<String, Long> generations = new HashMap<>();
            for (String namespace :
                namespaces.isEmpty() ? java.util.Collections.<String>singleton(null) : namespaces) {
              String next = null;
              do {
                var resources = client.resources(DelayedTask.class);
                var list =
                    (namespace == null
                            ? resources.inAnyNamespace()
                            : resources.inNamespace(namespace))
                        .list(
                            new ListOptionsBuilder()
                                .withLimit(CachedObjects.TASKS_PER_LIST_PAGE)
                                .withContinue(next)
                                .build());
                for (DelayedTask task : list.getItems()) {
                  generations.put(task.getMetadata().getUid(), task.getMetadata().getGeneration());
                }
                next = list.getMetadata() == null ? null : list.getMetadata().getContinue();
              } while (next != null && !next.isEmpty());
            }
            if (Objects.equals(state().right(), present)) {
              baseline = new Baseline(present, Map.copyOf(generations));
            }
          } catch (RuntimeException e) {
            LOG.warn(
                "Listing the tasks after the admission policy came into force failed (retried): {}",
                e.toString());
          } finally {
            listing.set(false);
          }
        },
        wait,
        TimeUnit.MILLISECONDS);
  }

  private synchronized void logIfChanged() {
    Optional<String> now = missing();
    if (!now.equals(lastLogged)) {
      lastLogged = now;
      if (now.isPresent()) {
        LOG.warn("Admission policy missing: {}", now.get());
      } else {
        LOG.info(
            "Admission policy in force ({}): tasks with a jobTemplate or a sink.audience fire",
            String.join(", ", required));
      }
    }
  }

  @Override
  public void close() {
    if (bindings != null) {
      bindings.close();
      policies.close();
    }
    if (background != null) {
      background.shutdownNow();
    }
  }
}
