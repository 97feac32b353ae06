package io.delayedtask.operator.task;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.DelayedTaskSpec;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.util.HashMap;
import java.util.Map;

/**
 * What the informers keep of tasks and Jobs beyond {@link LeanItemStore}'s managedFields.
 *
 * <p>A task may carry up to 256 KiB of payload, 64 KiB of data and a jobTemplate of any size the
 * API server takes; 2,000 such tasks would not fit the default 512Mi. Those fields are read only
 * when a task is validated, dry-run, fired or delivered, all in its reconcile. So a task whose
 * payload, data and jobTemplate together pass {@link #KEEP_UP_TO_CHARS} is cached without them,
 * marked, and its reconcile reads it whole from the API server first (one GET per reconcile of
 * a large task; a task under the limit costs no request more). The mark lives in the cached copy
 * only: a status write sends no metadata the API server keeps.
 *
 * <p>A Job the operator created repeats its task's payload as annotations and carries its pod
 * template; the operator reads only its status, labels, owner and its firing annotations, so the
 * cache keeps nothing else of it, whatever its size.
 */
public final class CachedObjects {
  /** Tasks whose large fields stay in the cache: every one at the contract's usual sizes. */
  public static final int KEEP_UP_TO_CHARS = 32 * 1024;
  /** Set on a cached task that was cached without its large fields. Never written. */
  static final String TRIMMED = "delayedtask.io/cached-without-payload-data-and-job-template";

  private CachedObjects() {}

  /** Drops the payload, data and jobTemplate of a large task, marking it. */
  public static void trimTask(DelayedTask task) {
    DelayedTaskSpec spec = task.getSpec();
    if (spec == null || task.getMetadata() == null || largeFieldChars(spec) <= KEEP_UP_TO_CHARS) {
      return;
    }
    spec.setPayload(null);
    spec.setData(null);
    spec.setJobTemplate(null);
    Map<String, String> annotations = task.getMetadata().getAnnotations() == null
        ? new HashMap<>() : new HashMap<>(task.getMetadata().getAnnotations());
    annotations.put(TRIMMED, "true");
    task.getMetadata().setAnnotations(annotations);
  }

  /** Whether this copy came from the cache without its large fields (read it whole before deciding). */
  public static boolean isTrimmed(DelayedTask task) {
    ObjectMeta metadata = task.getMetadata();
    return metadata != null && metadata.getAnnotations() != null && metadata.getAnnotations().containsKey(TRIMMED);
  }

  /** Drops a Job's pod template and payload annotations: nothing the operator reads. */
  public static void trimJob(Job job) {
    if (job.getSpec() != null) {
      job.getSpec().setTemplate(null);
    }
    if (job.getMetadata() != null && job.getMetadata().getAnnotations() != null) {
      job.getMetadata().getAnnotations().keySet().removeIf(key -> key.startsWith(TaskLabels.PAYLOAD_PREFIX));
    }
  }

  private static long largeFieldChars(DelayedTaskSpec spec) {
    long chars = spec.getData() == null ? 0 : spec.getData().length();
    if (spec.getPayload() != null) {
      for (Map.Entry<String, String> entry : spec.getPayload().entrySet()) {
        chars += entry.getKey().length() + (entry.getValue() == null ? 0 : entry.getValue().length());
      }
    }
    if (chars <= KEEP_UP_TO_CHARS && spec.getJobTemplate() != null) {
      chars += Serialization.asJson(spec.getJobTemplate()).length();
    }
    return chars;
  }
}
