package io.delayedtask.operator.reconcile;

import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicy;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicyBinding;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether the admission policy that checks a task's author (docs/reference.md, "No task does what
 * its author may not") is in place: each ValidatingAdmissionPolicyBinding named in {@code
 * DELAYEDTASK_ADMISSION_POLICY}, denying, with the policy it binds. The operator acts with its own
 * rights at the due time, so without the policy it fails closed: a task with a {@code jobTemplate}
 * or a {@code sink.audience} creates no Job and sends no token ({@link TaskDecider}) while
 * {@link #missing()} says why.
 *
 * <p>Two cluster-scoped informers (get, list, watch on both kinds) keep the answer current without a
 * request per firing. Until they have listed, the policy counts as missing (closed, not open); an
 * informer that cannot list (no such API, no RBAC) keeps retrying and the policy stays missing.
 */
public final class AdmissionPolicies implements AutoCloseable {
  /** Prometheus: {@code delayedtask_admission_policy_present} 1 or 0. */
  public static final String PRESENT_METRIC = "delayedtask.admission.policy.present";
  private static final Logger LOG = LoggerFactory.getLogger(AdmissionPolicies.class);

  private final List<String> required;
  private final SharedIndexInformer<ValidatingAdmissionPolicyBinding> bindings;
  private final SharedIndexInformer<ValidatingAdmissionPolicy> policies;
  private volatile Optional<String> lastLogged = Optional.empty();

  private AdmissionPolicies(List<String> required, SharedIndexInformer<ValidatingAdmissionPolicyBinding> bindings,
      SharedIndexInformer<ValidatingAdmissionPolicy> policies) {
    this.required = List.copyOf(required);
    this.bindings = bindings;
    this.policies = policies;
  }

  /** The bindings this check requires, each with its policy; never empty (use {@link #unchecked()}). */
  public static AdmissionPolicies watch(KubernetesClient client, List<String> required, MeterRegistry registry) {
    if (required.isEmpty()) {
      throw new IllegalArgumentException("no binding to watch: use AdmissionPolicies.unchecked()");
    }
    SharedIndexInformer<ValidatingAdmissionPolicyBinding> bindings = client.admissionRegistration().v1()
        .validatingAdmissionPolicyBindings().runnableInformer(0);
    SharedIndexInformer<ValidatingAdmissionPolicy> policies = client.admissionRegistration().v1()
        .validatingAdmissionPolicies().runnableInformer(0);
    AdmissionPolicies watch = new AdmissionPolicies(required, bindings, policies);
    ResourceEventHandler<Object> logChange = new ResourceEventHandler<>() {
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
      informer.exceptionHandler((started, t) -> {
        LOG.warn("Watching {} failed (the admission policy counts as missing until it works): {}",
            informer.getApiTypeClass().getSimpleName(), t.toString());
        return true;
      });
      informer.addEventHandler(logChange);
      informer.start().whenComplete((ok, failure) -> watch.logIfChanged());
    }
    Gauge.builder(PRESENT_METRIC, watch, w -> w.missing().isPresent() ? 0 : 1)
        .description("1 while every ValidatingAdmissionPolicyBinding of DELAYEDTASK_ADMISSION_POLICY exists and denies, "
            + "with its policy; 0 while one is missing (tasks with a jobTemplate or a sink.audience wait)")
        .register(registry);
    return watch;
  }

  /** {@code DELAYEDTASK_ADMISSION_POLICY=none}: no check, and no metric. */
  public static AdmissionPolicies unchecked() {
    return new AdmissionPolicies(List.of(), null, null);
  }

  /** Why the policy counts as missing now; empty while it is in place (or not checked). */
  public Optional<String> missing() {
    if (required.isEmpty()) {
      return Optional.empty();
    }
    if (!bindings.hasSynced() || !policies.hasSynced()) {
      return Optional.of("the admission policy's bindings (" + String.join(", ", required) + ") have not been "
          + "listed yet (the API server has no ValidatingAdmissionPolicy, or the operator may not list them)");
    }
    return missing(required, name -> bindings.getStore().getByKey(name),
        name -> policies.getStore().getByKey(name) != null);
  }

  /**
   * Why the required bindings are not all in place, as one sentence for the task's condition and
   * Event: the first binding that is missing, binds a policy that is missing, or does not deny.
   *
   * @param bindingNamed the binding of a name, or null
   * @param policyExists whether a policy of a name exists
   */
  static Optional<String> missing(List<String> required, Function<String, ValidatingAdmissionPolicyBinding> bindingNamed,
      Predicate<String> policyExists) {
    for (String name : required) {
      ValidatingAdmissionPolicyBinding binding = bindingNamed.apply(name);
      if (binding == null) {
        return Optional.of(restore("the ValidatingAdmissionPolicyBinding " + name + " is missing"));
      }
      String policy = binding.getSpec() == null ? null : binding.getSpec().getPolicyName();
      if (policy == null || !policyExists.test(policy)) {
        return Optional.of(restore("the ValidatingAdmissionPolicy " + policy + " that binding " + name
            + " binds is missing"));
      }
      List<String> actions = binding.getSpec().getValidationActions();
      if (actions == null || !actions.contains("Deny")) {
        return Optional.of(restore("the ValidatingAdmissionPolicyBinding " + name + " does not deny (validationActions "
            + actions + ")"));
      }
    }
    return Optional.empty();
  }

  private static String restore(String what) {
    return what + ", so no Job is created and no token sent (nor anything signed) for this task: restore it (helm upgrade with "
        + "admissionPolicy.enabled=true, or kubectl apply -f k8s/15-admission-policy.yaml), or set "
        + "DELAYEDTASK_ADMISSION_POLICY to the bindings in use (none: no check, at the installer's risk)";
  }

  private synchronized void logIfChanged() {
    Optional<String> now = missing();
    if (!now.equals(lastLogged)) {
      lastLogged = now;
      if (now.isPresent()) {
        LOG.warn("Admission policy missing: {}", now.get());
      } else {
        LOG.info("Admission policy in place ({}): tasks with a jobTemplate or a sink.audience fire",
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
  }
}
