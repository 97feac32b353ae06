package io.delayedtask.operator.task.spec;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.DelayedTaskSpec;
import io.delayedtask.operator.task.cache.CachedObjects;
import io.delayedtask.operator.task.time.Durations;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.batch.v1.JobTemplateSpec;
import java.time.Instant;
import java.time.ZoneId;
import java.util.Collection;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Checks a DelayedTask's spec again (the CRD's CEL rules are not enforced by every API server) and
 * gives its due time ({@link DueTimes}), remembering the verdict per generation ({@link
 * SpecVerdicts}). The rules of the task's own fields are here; those of a delivery are the delivery
 * package's ({@link SpecRules}). Every refusal names the field and the fix.
 */
public final class SpecValidator {
  /** The name part of an annotation key is at most 63 characters; "payload." takes 8 of them. */
  private static final Pattern PAYLOAD_KEY =
      Pattern.compile("[A-Za-z0-9]([-A-Za-z0-9_.]{0,53}[A-Za-z0-9])?");

  private final SpecRules otherRules;
  private final SpecVerdicts verdicts = new SpecVerdicts();

  /**
   * {@code otherRules}: the rules of the fields other packages own (the sink's), asked after these.
   */
  public SpecValidator(SpecRules otherRules) {
    this.otherRules = Objects.requireNonNull(otherRules);
  }

  /**
   * The task's due time, or why it has none. While {@code metadata.generation} equals {@code
   * status.observedGeneration} the recorded {@code status.dueTime} stands: an operator of another
   * version (another time-zone database, a parser fix) never moves the due time of a task whose
   * spec did not change, so it never fires a finished task again under a new due time.
   */
  public Validation validate(DelayedTask task) {
    Validation computed = specOnce(task);
    if (computed instanceof Validation.Valid) {
      Instant recorded = DueTimes.recorded(task);
      if (recorded != null) {
        return new Validation.Valid(recorded);
      }
    }
    return computed;
  }

  /**
   * Forgets the tasks whose uid is not in {@code liveUids} (the resync passes every task it saw).
   */
  public void retainOnly(Collection<String> liveUids) {
    verdicts.retainOnly(liveUids);
  }

  /** How many tasks' verdicts are kept (for tests). */
  int remembered() {
    return verdicts.size();
  }

  private Validation specOnce(DelayedTask task) {
    ObjectMeta metadata = task.getMetadata();
    if (metadata == null || metadata.getUid() == null || metadata.getGeneration() == null) {
      return validateSpec(task);
    }
    long generation = metadata.getGeneration();
    Optional<Validation> known = verdicts.of(metadata.getUid(), generation);
    if (known.isPresent()) {
      return known.get();
    }
    Validation validation = validateSpec(task);
    if (!CachedObjects.isTrimmed(task) && otherRules.settled(task)) {
      // A copy cached without its large fields is checked again once read whole; a verdict that may
      // still change (a ref's kind not known yet) is asked again.
      verdicts.remember(metadata.getUid(), generation, validation);
    }
    return validation;
  }

  private Validation validateSpec(DelayedTask task) {
    DelayedTaskSpec spec = task.getSpec();
    if (spec == null) {
      return invalid(
          "spec is missing; set spec.runAt ("
              + DueTimes.RUN_AT_EXAMPLE
              + ") or spec.delay ("
              + Durations.EXAMPLE
              + ")");
    }
    if (!spec.unreadableFields().isEmpty()) {
      // Read leniently (api.v1alpha1.LenientDeserializer): a field of the wrong type is named here.
      return invalid(
          String.join("; ", spec.unreadableFields()) + "; fix the field and apply the task again");
    }
    boolean hasRunAt = spec.getRunAt() != null;
    boolean hasDelay = spec.getDelay() != null;
    if (hasRunAt && hasDelay) {
      return invalid("spec.runAt and spec.delay are both set; keep exactly one of them");
    }
    if (!hasRunAt && !hasDelay) {
      return invalid(
          "neither spec.runAt nor spec.delay is set; set exactly one: spec.runAt ("
              + DueTimes.RUN_AT_EXAMPLE
              + ") or spec.delay ("
              + Durations.EXAMPLE
              + ")");
    }
    String when = hasRunAt ? spec.getRunAt() : spec.getDelay();
    if (when.length() > DelayedTaskSpec.MAX_LENGTH) {
      // The CRD's maxLength, checked again: spaces around a time or a duration are read, so a long
      // value could still mean something here and be refused by an API server that checks the
      // schema.
      return invalid(
          (hasRunAt ? "spec.runAt" : "spec.delay")
              + " has "
              + when.length()
              + " characters; at most "
              + DelayedTaskSpec.MAX_LENGTH
              + ": use "
              + (hasRunAt ? DueTimes.RUN_AT_EXAMPLE : Durations.EXAMPLE));
    }
    if (outOfRange(spec.getStartingDeadlineSeconds())) {
      return invalid(
          "spec.startingDeadlineSeconds is "
              + spec.getStartingDeadlineSeconds()
              + "; use a number of seconds from 0 to "
              + DelayedTaskSpec.MAX_SECONDS
              + " (10 years), or remove it for "
              + "no deadline");
    }
    if (outOfRange(spec.getTtlSecondsAfterFinished())) {
      return invalid(
          "spec.ttlSecondsAfterFinished is "
              + spec.getTtlSecondsAfterFinished()
              + "; use a number of seconds from 0 to "
              + DelayedTaskSpec.MAX_SECONDS
              + " (10 years), or remove it to "
              + "keep the task");
    }
    ZoneId zone = null;
    if (spec.getTimeZone() != null) {
      zone = DueTimes.knownZone(spec.getTimeZone());
      if (zone == null) {
        return invalid(
            "spec.timeZone '"
                + spec.getTimeZone()
                + "' is not a known IANA time zone; use "
                + DueTimes.TIME_ZONE_EXAMPLE
                + ", or remove it and give spec.runAt an offset such as +01:00");
      }
    }
    Validation template = checkJobTemplate(task, spec.getJobTemplate());
    if (template != null) {
      return template;
    }
    Validation payload = checkPayload(spec.getPayload());
    if (payload != null) {
      return payload;
    }
    Optional<Validation.Invalid> refused = otherRules.refusal(task);
    if (refused.isPresent()) {
      return refused.get();
    }
    return hasRunAt
        ? DueTimes.fromRunAt(spec.getRunAt(), zone)
        : DueTimes.fromDelay(task, spec.getDelay());
  }

  private static Validation checkJobTemplate(DelayedTask task, JobTemplateSpec template) {
    if (template == null) {
      return null;
    }
    ObjectMeta metadata = template.getMetadata();
    String taskNamespace = task.getMetadata().getNamespace();
    if (metadata != null
        && metadata.getNamespace() != null
        && !metadata.getNamespace().isEmpty()
        && !metadata.getNamespace().equals(taskNamespace)) {
      return invalid(
          "spec.jobTemplate.metadata.namespace is '"
              + metadata.getNamespace()
              + "', but the Job is always created in the task's namespace '"
              + taskNamespace
              + "'; remove it or set it to '"
              + taskNamespace
              + "'");
    }
    if (template.getSpec() == null || template.getSpec().getTemplate() == null) {
      return invalid(
          "spec.jobTemplate has no spec.template (the pod to run); add spec.jobTemplate.spec.template, "
              + "or remove spec.jobTemplate to only record the firing in the status");
    }
    return null;
  }

  private static boolean outOfRange(Long seconds) {
    return seconds != null && (seconds < 0 || seconds > DelayedTaskSpec.MAX_SECONDS);
  }

  private static Validation checkPayload(Map<String, String> payload) {
    if (payload == null) {
      return null;
    }
    if (payload.size() > DelayedTaskSpec.PAYLOAD_MAX_KEYS) {
      return invalid(
          "spec.payload has "
              + payload.size()
              + " keys; use at most "
              + DelayedTaskSpec.PAYLOAD_MAX_KEYS
              + ", or pass a reference (a ConfigMap's name, a URL) instead of the data");
    }
    for (Map.Entry<String, String> entry : payload.entrySet()) {
      String key = entry.getKey();
      if (key == null || !PAYLOAD_KEY.matcher(key).matches()) {
        return invalid(
            "spec.payload key '"
                + key
                + "' cannot be used in the annotation delayedtask.io/payload.<key>; "
                + "use at most 55 letters, digits, '-', '_' or '.', starting and ending with a letter or digit");
      }
      if (entry.getValue() != null
          && entry.getValue().length() > DelayedTaskSpec.PAYLOAD_MAX_VALUE_LENGTH) {
        return invalid(
            "spec.payload."
                + key
                + " has "
                + entry.getValue().length()
                + " characters; use at most "
                + DelayedTaskSpec.PAYLOAD_MAX_VALUE_LENGTH
                + ", or pass a reference (a ConfigMap's name, a URL) instead "
                + "of the data");
      }
    }
    return null;
  }

  private static Validation invalid(String message) {
    return new Validation.Invalid(message);
  }
}
