package io.delayedtask.operator.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicyBinding;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicyBindingBuilder;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** When the admission policy counts as in place: every binding named, denying, with its policy. */
class AdmissionPoliciesTest {
  private static final List<String> REQUIRED = List.of("dto-author-rights", "dto-status-writer");

  private final Map<String, ValidatingAdmissionPolicyBinding> bindings = new HashMap<>();
  private final Set<String> policies = new HashSet<>();

  @Test
  void inPlaceWhenEveryBindingDeniesAndItsPolicyExists() {
    installAll();
    assertThat(missing()).isEmpty();
  }

  @Test
  void aMissingBindingIsNamedWithHowToRestoreIt() {
    installAll();
    bindings.remove("dto-status-writer");
    assertThat(missing()).hasValueSatisfying(why -> assertThat(why)
        .startsWith("the ValidatingAdmissionPolicyBinding dto-status-writer is missing")
        .contains("no Job is created and no token sent", "helm upgrade", "kubectl apply -f k8s/15-admission-policy.yaml",
            "DELAYEDTASK_ADMISSION_POLICY"));
  }

  @Test
  void aBindingWhosePolicyIsMissingCountsAsMissing() {
    installAll();
    policies.remove("dto-author-rights");
    assertThat(missing()).hasValueSatisfying(why -> assertThat(why)
        .startsWith("the ValidatingAdmissionPolicy dto-author-rights that binding dto-author-rights binds is missing"));
  }

  @Test
  void aBindingThatOnlyWarnsOrAuditsCountsAsMissing() {
    installAll();
    bindings.put("dto-author-rights", binding("dto-author-rights", "dto-author-rights", "Warn", "Audit"));
    assertThat(missing()).hasValueSatisfying(why -> assertThat(why)
        .startsWith("the ValidatingAdmissionPolicyBinding dto-author-rights does not deny (validationActions [Warn, Audit])"));
  }

  @Test
  void uncheckedNeverSaysMissing() {
    assertThat(AdmissionPolicies.unchecked().missing()).isEmpty();
  }

  private Optional<String> missing() {
    return AdmissionPolicies.missing(REQUIRED, bindings::get, policies::contains);
  }

  private void installAll() {
    for (String name : REQUIRED) {
      bindings.put(name, binding(name, name, "Deny"));
      policies.add(name);
    }
  }

  private static ValidatingAdmissionPolicyBinding binding(String name, String policy, String... actions) {
    return new ValidatingAdmissionPolicyBindingBuilder().withNewMetadata().withName(name).endMetadata()
        .withNewSpec().withPolicyName(policy).withValidationActions(actions).endSpec().build();
  }
}
