package io.delayedtask.operator.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.DelayedTaskStatus;
import io.delayedtask.operator.reconcile.AdmissionPolicies.Verdict;
import io.fabric8.kubernetes.api.model.LabelSelectorRequirementBuilder;
import io.fabric8.kubernetes.api.model.ManagedFieldsEntryBuilder;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.MatchResourcesBuilder;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ParamRefBuilder;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicy;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicyBinding;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicyBindingBuilder;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicyBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.JobTemplateSpec;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * When the admission policy counts as in force (every binding named, denying, binding a policy that
 * fails closed with the rules the operator ships, compared by content), and whether a task's
 * current spec went through it.
 */
class AdmissionPoliciesTest {
  static final Path PLAIN = Path.of("k8s/15-admission-policy.yaml");
  private static final String AUTHOR = "delayed-task-operator-author-rights";
  private static final String STATUS = "delayed-task-operator-status-writer";
  private static final List<String> REQUIRED = List.of(AUTHOR, STATUS);
  private static final Instant INSTALLED = Instant.parse("2026-12-01T10:00:00Z");
  private static final byte[] KEY = AdmissionPolicies.key("crd-uid-1");

  private final Map<String, ValidatingAdmissionPolicyBinding> bindings = new HashMap<>();
  private final Map<String, ValidatingAdmissionPolicy> policies = new HashMap<>();
  private ShippedPolicies shipped;

  @BeforeEach
  void installAsShipped() throws IOException {
    List<ValidatingAdmissionPolicy> file = plainPolicies();
    shipped = new ShippedPolicies(file, "delayedtask-sender", "delayedtask-signing");
    for (ValidatingAdmissionPolicy policy : file) {
      String name = policy.getMetadata().getName();
      policies.put(
          name,
          new ValidatingAdmissionPolicyBuilder(asStored(policy))
              .editMetadata()
              .withUid("policy-" + name)
              .withCreationTimestamp(INSTALLED.toString())
              .endMetadata()
              .build());
      bindings.put(name, binding(name, "Deny"));
    }
  }

  @Test
  void theOperatorsCopyIsThePlainManifestsFileByteForByte() throws IOException {
    try (InputStream inJar = ShippedPolicies.class.getResourceAsStream(ShippedPolicies.RESOURCE)) {
      assertThat(inJar)
          .as("the build copies k8s/15-admission-policy.yaml into the jar")
          .isNotNull();
      assertThat(inJar.readAllBytes()).isEqualTo(Files.readAllBytes(PLAIN));
    }
  }

  @Test
  void inForceAsShippedEvenWithTheDefaultsTheApiServerAddsAndSinceItsObjectsWereWritten() {
    AdmissionPolicies.Either state = state();
    assertThat(state.left()).isEmpty();
    assertThat(state.right().since()).isEqualTo(INSTALLED);
    bindings.put(
        AUTHOR,
        new ValidatingAdmissionPolicyBindingBuilder(bindings.get(AUTHOR))
            .editMetadata()
            .withManagedFields(
                new ManagedFieldsEntryBuilder()
                    .withManager("kubectl")
                    .withOperation("Update")
                    .withTime("2026-12-02T08:00:00Z")
                    .build())
            .endMetadata()
            .build());
    assertThat(state().right().since())
        .as("an edit of a binding moves it")
        .isEqualTo(Instant.parse("2026-12-02T08:00:00Z"));
  }

  @Test
  void aMissingBindingIsNamedWithHowToRestoreIt() {
    bindings.remove(STATUS);
    assertThat(state().left())
        .hasValueSatisfying(
            why ->
                assertThat(why)
                    .startsWith("the ValidatingAdmissionPolicyBinding " + STATUS + " is missing")
                    .contains(
                        "no Job is created, no token sent and nothing signed",
                        "helm upgrade",
                        "kubectl apply -f k8s/15-admission-policy.yaml",
                        "DELAYEDTASK_ADMISSION_POLICY"));
  }

  @Test
  void aBindingWhosePolicyIsMissingCountsAsMissing() {
    policies.remove(AUTHOR);
    assertThat(state().left())
        .hasValueSatisfying(
            why ->
                assertThat(why)
                    .startsWith(
                        "the ValidatingAdmissionPolicy "
                            + AUTHOR
                            + " that binding "
                            + AUTHOR
                            + " binds is missing"));
  }

  @Test
  void aBindingThatOnlyWarnsOrAuditsCountsAsMissing() {
    bindings.put(AUTHOR, binding(AUTHOR, "Warn", "Audit"));
    assertThat(state().left())
        .hasValueSatisfying(
            why ->
                assertThat(why)
                    .startsWith(
                        "the ValidatingAdmissionPolicyBinding "
                            + AUTHOR
                            + " does not deny (validationActions [Warn, Audit])"));
  }

  @Test
  void aPolicyThatFailsOpenCountsAsMissing() {
    edit(
        AUTHOR,
        p ->
            new ValidatingAdmissionPolicyBuilder(p)
                .editSpec()
                .withFailurePolicy("Ignore")
                .endSpec()
                .build());
    assertThat(state().left())
        .hasValueSatisfying(
            why ->
                assertThat(why)
                    .startsWith(
                        "the ValidatingAdmissionPolicy "
                            + AUTHOR
                            + " has failurePolicy Ignore, not Fail"));
  }

  @Test
  void aPolicyWhoseRulesDifferFromTheShippedOnesCountsAsMissingWhateverItsName() {
    String because =
        "the ValidatingAdmissionPolicy "
            + AUTHOR
            + " that binding "
            + AUTHOR
            + " binds is not one this "
            + "operator ships";
    edit(
        AUTHOR,
        p ->
            new ValidatingAdmissionPolicyBuilder(p)
                .editSpec()
                .editFirstValidation()
                .withExpression("true")
                .endValidation()
                .endSpec()
                .build());
    assertThat(state().left())
        .as("a validation that admits everything")
        .hasValueSatisfying(why -> assertThat(why).startsWith(because));

    installAsShippedAgain();
    edit(
        AUTHOR,
        p ->
            new ValidatingAdmissionPolicyBuilder(p)
                .editSpec()
                .editFirstMatchCondition()
                .withExpression("false")
                .endMatchCondition()
                .endSpec()
                .build());
    assertThat(state().left())
        .as("a match condition that matches nothing")
        .hasValueSatisfying(why -> assertThat(why).startsWith(because));

    installAsShippedAgain();
    edit(
        AUTHOR,
        p ->
            new ValidatingAdmissionPolicyBuilder(p)
                .editSpec()
                .editMatchConstraints()
                .editFirstResourceRule()
                .withOperations("CREATE")
                .endResourceRule()
                .endMatchConstraints()
                .endSpec()
                .build());
    assertThat(state().left())
        .as("UPDATE no longer checked")
        .hasValueSatisfying(why -> assertThat(why).startsWith(because));

    installAsShippedAgain();
    edit(
        AUTHOR,
        p ->
            new ValidatingAdmissionPolicyBuilder(p)
                .editSpec()
                .editFirstVariable()
                .withExpression("'default'")
                .endVariable()
                .endSpec()
                .build());
    assertThat(state().left())
        .as("another ServiceAccount's token rights checked")
        .hasValueSatisfying(why -> assertThat(why).startsWith(because));

    installAsShippedAgain();
    edit(
        STATUS,
        p ->
            new ValidatingAdmissionPolicyBuilder(p)
                .editSpec()
                .editFirstVariable()
                .withExpression("request.userInfo.username")
                .endVariable()
                .endSpec()
                .build());
    assertThat(state().left())
        .as("the operator's name replaced by whoever asks")
        .hasValueSatisfying(
            why -> assertThat(why).contains(STATUS + " binds is not one this operator ships"));
  }

  @Test
  void theInstallationsChoicesAreComparedByFormOnly() {
    edit(
        STATUS,
        p ->
            new ValidatingAdmissionPolicyBuilder(p)
                .editSpec()
                .editMatchingVariable(v -> "operator".equals(v.getName()))
                .withExpression("'system:serviceaccount:ops:dto'")
                .endVariable()
                .editMatchingVariable(v -> "statusWriters".equals(v.getName()))
                .withExpression("['alice', 'bob']")
                .endVariable()
                .endSpec()
                .build());
    assertThat(state().left()).isEmpty();
    edit(
        AUTHOR,
        p ->
            new ValidatingAdmissionPolicyBuilder(p)
                .editSpec()
                .editMatchingValidation(v -> true)
                .withMessage("another message")
                .endValidation()
                .endSpec()
                .build());
    assertThat(state().left()).as("messages decide nothing").isEmpty();
  }

  @Test
  void aBindingThatTakesAParameterOrLeavesOutAWatchedNamespaceCountsAsMissing() {
    bindings.put(
        AUTHOR,
        new ValidatingAdmissionPolicyBindingBuilder(bindings.get(AUTHOR))
            .editSpec()
            .withParamRef(new ParamRefBuilder().withName("x").build())
            .endSpec()
            .build());
    assertThat(state().left())
        .hasValueSatisfying(why -> assertThat(why).contains("takes a paramRef"));

    bindings.put(
        AUTHOR,
        new ValidatingAdmissionPolicyBindingBuilder(bindings.get(AUTHOR))
            .editSpec()
            .withParamRef(null)
            .withMatchResources(
                new MatchResourcesBuilder()
                    .withNewNamespaceSelector()
                    .withMatchExpressions(
                        new LabelSelectorRequirementBuilder()
                            .withKey("kubernetes.io/metadata.name")
                            .withOperator("In")
                            .withValues("team-a")
                            .build())
                    .endNamespaceSelector()
                    .build())
            .endSpec()
            .build());
    assertThat(state().left())
        .as("the operator watches every namespace")
        .hasValueSatisfying(
            why ->
                assertThat(why)
                    .contains("does not apply to every namespace the operator watches (all)"));
    assertThat(
            AdmissionPolicies.state(
                    REQUIRED, bindings::get, policies::get, shipped, Set.of("team-a"))
                .left())
        .as("the chart's binding for watchNamespaces")
        .isEmpty();
    assertThat(
            AdmissionPolicies.state(
                    REQUIRED, bindings::get, policies::get, shipped, Set.of("team-a", "team-b"))
                .left())
        .hasValueSatisfying(why -> assertThat(why).contains("(team-a, team-b)"));
  }

  @Test
  void everyShippedPolicyMustBeBound() {
    assertThat(
            AdmissionPolicies.state(
                    List.of(AUTHOR), bindings::get, policies::get, shipped, Set.of())
                .left())
        .hasValueSatisfying(
            why ->
                assertThat(why)
                    .startsWith(
                        "no binding of DELAYEDTASK_ADMISSION_POLICY ("
                            + AUTHOR
                            + ") binds the policy this operator ships as "
                            + STATUS));
  }

  @Test
  void uncheckedNeverSaysMissingAndAdmitsEverything() {
    AdmissionPolicies unchecked = AdmissionPolicies.unchecked();
    assertThat(unchecked.missing()).isEmpty();
    assertThat(unchecked.judge(jobTask("u1", 3L, INSTALLED.minusSeconds(60), null)))
        .isEqualTo(new Verdict.Admitted(Optional.empty()));
  }

  @Test
  void aTaskCreatedAfterThePolicyTookItsFormIsAdmittedAndRecorded() {
    AdmissionPolicies.Present present = state().right();
    DelayedTask task = jobTask("u1", 4L, INSTALLED.plus(AdmissionPolicies.GRACE), null);
    assertThat(AdmissionPolicies.judge(task, present, Optional.of(KEY), Optional.empty()))
        .isEqualTo(new Verdict.Admitted(Optional.of(AdmissionPolicies.record(KEY, "u1", 4L))));
    assertThat(AdmissionPolicies.record(KEY, "u1", 4L))
        .startsWith("4.")
        .isNotEqualTo(AdmissionPolicies.record(KEY, "u1", 5L))
        .isNotEqualTo(AdmissionPolicies.record(KEY, "u2", 4L))
        .isNotEqualTo(AdmissionPolicies.record(AdmissionPolicies.key("crd-uid-2"), "u1", 4L));
  }

  @Test
  void anOlderTaskIsAdmittedByItsRecordOfThisGenerationOnly() {
    AdmissionPolicies.Present present = state().right();
    Instant before = INSTALLED.minusSeconds(3600);
    String record = AdmissionPolicies.record(KEY, "u1", 2L);
    assertThat(
            AdmissionPolicies.judge(
                jobTask("u1", 2L, before, record),
                present,
                Optional.of(KEY),
                Optional.of(Map.of())))
        .isEqualTo(new Verdict.Admitted(Optional.of(record)));
    Verdict changedSince =
        AdmissionPolicies.judge(
            jobTask("u1", 3L, before, record),
            present,
            Optional.of(KEY),
            Optional.of(Map.of("u1", 3L)));
    assertThat(changedSince)
        .isInstanceOfSatisfying(
            Verdict.NotAdmitted.class,
            n ->
                assertThat(n.why())
                    .contains(
                        "generation 3",
                        "was written while the admission policy was missing",
                        "Write the task again"));
    assertThat(
            AdmissionPolicies.judge(
                jobTask("u2", 2L, before, record),
                present,
                Optional.of(KEY),
                Optional.of(Map.of("u2", 2L))))
        .as("another task's record")
        .isInstanceOf(Verdict.NotAdmitted.class);
    assertThat(
            AdmissionPolicies.judge(
                jobTask("u1", 2L, before, "2.forged"),
                present,
                Optional.of(KEY),
                Optional.of(Map.of("u1", 2L))))
        .as("a forged record")
        .isInstanceOf(Verdict.NotAdmitted.class);
    assertThat(
            AdmissionPolicies.judge(
                jobTask("u1", 2L, before, record),
                present,
                Optional.empty(),
                Optional.of(Map.of("u1", 2L))))
        .as("no key: no record believed")
        .isInstanceOf(Verdict.NotAdmitted.class);
  }

  @Test
  void anOlderTaskWrittenAfterTheListIsAdmittedAndUntilTheListTheVerdictWaits() {
    AdmissionPolicies.Present present = state().right();
    DelayedTask rewritten = jobTask("u1", 5L, INSTALLED.minusSeconds(3600), null);
    assertThat(AdmissionPolicies.judge(rewritten, present, Optional.of(KEY), Optional.empty()))
        .isInstanceOfSatisfying(
            Verdict.Missing.class, m -> assertThat(m.why()).contains("checking which tasks"));
    assertThat(
            AdmissionPolicies.judge(
                rewritten, present, Optional.of(KEY), Optional.of(Map.of("u1", 4L))))
        .isEqualTo(new Verdict.Admitted(Optional.of(AdmissionPolicies.record(KEY, "u1", 5L))));
    assertThat(
            AdmissionPolicies.judge(
                rewritten, present, Optional.of(KEY), Optional.of(Map.of("u1", 5L))))
        .isInstanceOf(Verdict.NotAdmitted.class);
  }

  @Test
  void onlyJobTemplatesAndAudiencesNeedThePolicy() {
    DelayedTask statusOnly = jobTask("u1", 1L, INSTALLED, null);
    statusOnly.getSpec().setJobTemplate(null);
    assertThat(AdmissionPolicies.needsPolicy(statusOnly)).isFalse();
    assertThat(AdmissionPolicies.needsPolicy(jobTask("u1", 1L, INSTALLED, null))).isTrue();
  }

  static List<ValidatingAdmissionPolicy> plainPolicies() throws IOException {
    return ShippedPolicies.read(Files.newInputStream(PLAIN));
  }

  /** As the API server stores it: with its defaults filled in. */
  private static ValidatingAdmissionPolicy asStored(ValidatingAdmissionPolicy policy) {
    return new ValidatingAdmissionPolicyBuilder(policy)
        .editSpec()
        .editMatchConstraints()
        .withMatchPolicy("Equivalent")
        .withNewNamespaceSelector()
        .endNamespaceSelector()
        .withNewObjectSelector()
        .endObjectSelector()
        .editFirstResourceRule()
        .withScope("*")
        .endResourceRule()
        .endMatchConstraints()
        .endSpec()
        .build();
  }

  private void installAsShippedAgain() {
    bindings.clear();
    policies.clear();
    try {
      installAsShipped();
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  private void edit(String name, UnaryOperator<ValidatingAdmissionPolicy> change) {
    policies.put(name, change.apply(policies.get(name)));
  }

  private AdmissionPolicies.Either state() {
    return AdmissionPolicies.state(REQUIRED, bindings::get, policies::get, shipped, Set.of());
  }

  private static ValidatingAdmissionPolicyBinding binding(String name, String... actions) {
    return new ValidatingAdmissionPolicyBindingBuilder()
        .withNewMetadata()
        .withName(name)
        .withUid("binding-" + name)
        .withCreationTimestamp(INSTALLED.toString())
        .endMetadata()
        .withNewSpec()
        .withPolicyName(name)
        .withValidationActions(actions)
        .endSpec()
        .build();
  }

  private static DelayedTask jobTask(
      String uid, Long generation, Instant created, String admission) {
    DelayedTask task = new DelayedTask();
    task.getMetadata().setName("t-" + uid);
    task.getMetadata().setNamespace("team-a");
    task.getMetadata().setUid(uid);
    task.getMetadata().setGeneration(generation);
    task.getMetadata().setCreationTimestamp(created.toString());
    task.setSpec(new io.delayedtask.operator.api.v1alpha1.DelayedTaskSpec());
    task.getSpec().setJobTemplate(new JobTemplateSpec());
    if (admission != null) {
      DelayedTaskStatus status = new DelayedTaskStatus();
      status.setAdmission(admission);
      task.setStatus(status);
    }
    return task;
  }
}
