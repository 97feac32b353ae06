package io.delayedtask.operator.sink;

/**
 * Which kinds a {@code sink.ref} may name besides a {@code v1} Service: the Knative Addressables
 * (docs/reference.md, "Delivering to a service"). Asked when a task is validated; an answer not
 * known yet lets the task through for now without remembering the verdict, so it is asked again.
 */
public interface RefKinds {
  /** The answer for one kind in one namespace. */
  sealed interface Verdict {
    /** The operator reads this kind's addresses. */
    record Addressable() implements Verdict {}

    /**
     * @param why for the task's status: which rule refuses the kind, and the fix
     */
    record Refused(String why) implements Verdict {}

    /** Not decided yet (being asked); the task is validated again. */
    record NotKnownYet() implements Verdict {}
  }

  Verdict verdict(String namespace, String apiVersion, String kind);

  /** Every kind the validator's own checks let through: for tests of other rules. */
  RefKinds ANY = (namespace, apiVersion, kind) -> new Verdict.Addressable();
}
