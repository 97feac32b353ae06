package io.delayedtask.operator.task.cache;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.DelayedTaskSpec;
import io.delayedtask.operator.api.v1alpha1.Destination;
import io.delayedtask.operator.task.job.TaskLabels;
import io.delayedtask.operator.task.lifetime.GitOpsOwner;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * What the informers keep of tasks and Jobs beyond {@link LeanItemStore}'s managedFields.
 *
 * <p>A task may carry up to 256 KiB of payload, 64 KiB of data and a jobTemplate of any size the
 * API server takes, and as much again in annotations (kubectl's last-applied-configuration repeats
 * the whole spec), {@code caCerts} and {@code ceOverrides}; 2,000 such tasks would not fit the
 * default 512Mi. Those fields are read only when a task is validated, dry-run, fired or delivered,
 * all in its reconcile. So a task whose payload, data, jobTemplate, annotations, caCerts and
 * ceOverrides together pass {@link #KEEP_UP_TO_CHARS} is cached without them (of its annotations it
 * keeps the small ones, up to {@link #KEEP_ANNOTATION_CHARS}, and Argo CD's mark, which the TTL
 * deletion reads), marked, and its reconcile reads it whole from the API server first (one GET per
 * reconcile of a large task; a task under the limit costs no request more). The mark lives in the
 * cached copy only: a status write sends no metadata the API server keeps.
 *
 * <p>A Job the operator created repeats its task's payload as annotations and carries its pod
 * template; the operator reads only its status, labels, owner and its firing annotations, so the
 * cache keeps nothing else of it, whatever its size.
 */
public final class CachedObjects {
  /**
   * Tasks per page when the operator lists them (its informers, the admission check's baseline): a
   * page arrives as one byte array and is parsed whole before the store trims it (below), and a
   * task may be as large as the API server stores (about 1.5 MiB: 256 KiB of annotations, caCerts,
   * a jobTemplate the operator then refuses). 200 such tasks (180 MB of JSON) made a restart at the
   * default 512Mi limit run out of heap; 50 listed 2,000 of them with 45 MB live
   * (docs/development/scale-lab.md, LargeTasksScale -Dshape=largest).
   */
  public static final long TASKS_PER_LIST_PAGE = 50;

  /** Tasks whose large fields stay in the cache: every one at the contract's usual sizes. */
  public static final int KEEP_UP_TO_CHARS = 32 * 1024;

  /**
   * What a large task keeps of its annotations: each at most 512 characters (key and value), 4 KiB
   * in all.
   */
  static final int KEEP_ANNOTATION_CHARS = 4 * 1024;

  private static final int KEEP_ANNOTATION_ENTRY_CHARS = 512;

  /** kubectl's copy of the whole object: never kept of a large task. */
  private static final String LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration";

  /** Set on a cached task that was cached without its large fields. Never written. */
  static final String TRIMMED = "delayedtask.io/cached-without-payload-data-and-job-template";

  private CachedObjects() {}

  /** Drops the large fields of a large task, marking it. */
  public static void trimTask(DelayedTask task) {
    DelayedTaskSpec spec = task.getSpec();
    if (spec == null
        || task.getMetadata() == null
        || largeFieldChars(spec) + annotationChars(task.getMetadata().getAnnotations())
            <= KEEP_UP_TO_CHARS) {
      return;
    }
    spec.setPayload(null);
    spec.setData(null);
    spec.setJobTemplate(null);
    spec.setCeOverrides(null);
    if (spec.getSink() != null) {
      spec.getSink().setCaCerts(null);
    }
    if (spec.getDelivery() != null && spec.getDelivery().getDeadLetterSink() != null) {
      spec.getDelivery().getDeadLetterSink().setCaCerts(null);
    }
    Map<String, String> annotations = new HashMap<>();
    Map<String, String> written =
        task.getMetadata().getAnnotations() == null
            ? Map.of()
            : new TreeMap<>(task.getMetadata().getAnnotations());
    int kept = 0;
    for (Map.Entry<String, String> entry : written.entrySet()) {
      int chars = entryChars(entry);
      if (entry.getKey().equals(GitOpsOwner.ARGO_CD_TRACKING_ID)) {
        annotations.put(
            entry.getKey(), chars <= KEEP_ANNOTATION_ENTRY_CHARS ? entry.getValue() : "");
      } else if (!entry.getKey().equals(LAST_APPLIED)
          && chars <= KEEP_ANNOTATION_ENTRY_CHARS
          && kept + chars <= KEEP_ANNOTATION_CHARS) {
        annotations.put(entry.getKey(), entry.getValue());
        kept += chars;
      }
    }
    annotations.put(TRIMMED, "true");
    task.getMetadata().setAnnotations(annotations);
  }

  private static long annotationChars(Map<String, String> annotations) {
    return annotations == null
        ? 0
        : annotations.entrySet().stream().mapToLong(CachedObjects::entryChars).sum();
  }

  private static int entryChars(Map.Entry<String, String> entry) {
    return entry.getKey().length() + (entry.getValue() == null ? 0 : entry.getValue().length());
  }

  /**
   * Whether this copy came from the cache without its large fields (read it whole before deciding).
   */
  public static boolean isTrimmed(DelayedTask task) {
    ObjectMeta metadata = task.getMetadata();
    return metadata != null
        && metadata.getAnnotations() != null
        && metadata.getAnnotations().containsKey(TRIMMED);
  }

  /** Drops a Job's pod template and payload annotations: nothing the operator reads. */
  public static void trimJob(Job job) {
    if (job.getSpec() != null) {
      job.getSpec().setTemplate(null);
    }
    if (job.getMetadata() != null && job.getMetadata().getAnnotations() != null) {
      job.getMetadata()
          .getAnnotations()
          .keySet()
          .removeIf(key -> key.startsWith(TaskLabels.PAYLOAD_PREFIX));
    }
  }

  private static long largeFieldChars(DelayedTaskSpec spec) {
    long chars = spec.getData() == null ? 0 : spec.getData().length();
    if (spec.getPayload() != null) {
      for (Map.Entry<String, String> entry : spec.getPayload().entrySet()) {
        chars +=
            entry.getKey().length() + (entry.getValue() == null ? 0 : entry.getValue().length());
      }
    }
    for (Destination destination :
        new Destination[] {
          spec.getSink(), spec.getDelivery() == null ? null : spec.getDelivery().getDeadLetterSink()
        }) {
      if (destination != null && destination.getCaCerts() != null) {
        chars += destination.getCaCerts().length();
      }
    }
    if (spec.getCeOverrides() != null && spec.getCeOverrides().getExtensions() != null) {
      for (Map.Entry<String, String> entry : spec.getCeOverrides().getExtensions().entrySet()) {
        chars += entryChars(entry);
      }
    }
    if (chars <= KEEP_UP_TO_CHARS && spec.getJobTemplate() != null) {
      chars += Serialization.asJson(spec.getJobTemplate()).length();
    }
    return chars;
  }
}
