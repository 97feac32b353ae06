package io.delayedtask.operator.reconcile;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.sink.DeliveryDecisions;
import io.delayedtask.operator.task.time.Times;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.ObjectReferenceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.util.Collections;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Records core/v1 Events on a DelayedTask. Failing to record one is never fatal.
 *
 * <p>One Event per (task, reason), with a name derived from both (as client-go's recorder
 * aggregates repeats and Flink's {@code EventUtils} names them): the first occurrence creates it,
 * each repeat raises its {@code count} and moves {@code lastTimestamp}. So a retried step never
 * leaves two Events for one reason, and {@code kubectl describe} shows one line with a count.
 */
public class TaskEvents {
  public static final String SCHEDULED = "Scheduled";
  public static final String SUSPENDED = "Suspended";
  public static final String FIRED = "Fired";
  public static final String JOB_CREATED = "JobCreated";
  public static final String SUCCEEDED = "Succeeded";
  public static final String MISSED = "Missed";
  public static final String INVALID = "Invalid";
  public static final String FAILED = "Failed";
  public static final String DELIVERED = DeliveryDecisions.DELIVERED;
  public static final String DELIVERY_FAILED = DeliveryDecisions.DELIVERY_FAILED;
  public static final String DEAD_LETTERED = DeliveryDecisions.DEAD_LETTERED;

  /**
   * A task was due while the admission policy was missing: no Job, no token, it waits (Warning).
   */
  public static final String ADMISSION_POLICY_MISSING = "AdmissionPolicyMissing";

  /**
   * A task was due whose spec was written while the admission policy was missing: no Job, no token
   * until written again (Warning).
   */
  public static final String NOT_ADMITTED = "NotAdmitted";

  /** A finished task's TTL passed, and it was kept because a GitOps tool manages it. */
  public static final String TTL_SKIPPED = "TTLSkipped";

  /** The annotation delayedtask.io/fire-now fired the task at once. */
  public static final String FIRE_NOW = "FireNow";

  /**
   * The annotation delayedtask.io/fire-now came after the task fired for its due time: nothing
   * fired (Warning).
   */
  public static final String FIRE_NOW_IGNORED = "FireNowIgnored";

  /** The annotation delayedtask.io/fire-now is not an RFC 3339 time: nothing fired (Warning). */
  public static final String FIRE_NOW_INVALID = "FireNowInvalid";

  /**
   * The task's DelayedTaskQueue was deleted while the task waited in it: it fires without the
   * queue's limits.
   */
  public static final String QUEUE_DELETED = "QueueDeleted";

  private static final String COMPONENT = "delayed-task-operator";
  private static final Logger LOG = LoggerFactory.getLogger(TaskEvents.class);

  /** An Event's name is a DNS subdomain: at most 253 characters. */
  private static final int MAX_NAME = 253;

  private static final int HASH_CHARS = 16;

  /**
   * Concurrent repeats of one reason (an old leader not yet stopped) meet a conflict; this many
   * tries, then give up.
   */
  private static final int ATTEMPTS = 3;

  /** Events whose last write this process remembers (least recently used forgotten first). */
  private static final int REMEMBERED = 10_000;

  private final KubernetesClient client;
  private final Clock clock;

  /**
   * The resourceVersion and count of each Event this process last wrote, so that a repeat (a
   * delivery retried every few seconds) is one PATCH, not a create refused with 409, a read and a
   * patch. A patch carrying a stale resourceVersion (another replica wrote since, or the Event
   * expired) is refused, and the repeat goes the long way.
   */
  private final Map<String, Written> written =
      Collections.synchronizedMap(
          new LinkedHashMap<>(256, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, Written> eldest) {
              return size() > REMEMBERED;
            }
          });

  private record Written(String resourceVersion, int count) {
    static Written of(Event event) {
      return new Written(
          event.getMetadata().getResourceVersion(),
          event.getCount() == null ? 1 : event.getCount());
    }
  }

  public TaskEvents(KubernetesClient client, Clock clock) {
    this.client = client;
    this.clock = clock;
  }

  public void normal(DelayedTask task, String reason, String message) {
    record(task, "Normal", reason, message);
  }

  public void warning(DelayedTask task, String reason, String message) {
    record(task, "Warning", reason, message);
  }

  /**
   * {@code <task-name>.<16 hex chars of sha256(uid/reason)>}: the same for every repeat of the
   * reason.
   */
  public static String eventName(DelayedTask task, String reason) {
    String uid = task.getMetadata().getUid() == null ? "" : task.getMetadata().getUid();
    String hash = sha256(uid + "/" + reason).substring(0, HASH_CHARS);
    String name = task.getMetadata().getName();
    if (name.length() > MAX_NAME - HASH_CHARS - 1) {
      // Shortened, and never ending in '-' or '.', which would make an invalid subdomain label.
      name = name.substring(0, MAX_NAME - HASH_CHARS - 1).replaceAll("[-.]+$", "");
    }
    return name + "." + hash;
  }

  private void record(DelayedTask task, String type, String reason, String message) {
    String namespace = task.getMetadata().getNamespace();
    String name = eventName(task, reason);
    try {
      for (int attempt = 1; attempt <= ATTEMPTS; attempt++) {
        if (createOrCount(task, namespace, name, type, reason, message)) {
          LOG.info("{}: {}", reason, message);
          return;
        }
      }
      LOG.warn(
          "{}: {} (the event was changed concurrently {} times; not recorded)",
          reason,
          message,
          ATTEMPTS);
    } catch (RuntimeException e) {
      LOG.warn("{}: {} (the event could not be recorded: {})", reason, message, e.getMessage());
    }
  }

  /**
   * Creates the Event, or raises the count of the one there; false on a conflict worth another try.
   */
  private boolean createOrCount(
      DelayedTask task, String namespace, String name, String type, String reason, String message) {
    String now = Times.format(clock.instant());
    String key = namespace + "/" + name;
    Written known = written.remove(key);
    if (known != null && countUp(namespace, name, known, type, message, now, key)) {
      return true;
    }
    Resource<Event> event = client.v1().events().inNamespace(namespace).withName(name);
    Event existing = null;
    try {
      Event created =
          client
              .v1()
              .events()
              .inNamespace(namespace)
              .resource(firstOccurrence(task, name, type, reason, message, now))
              .create();
      written.put(key, Written.of(created));
      return true;
    } catch (KubernetesClientException e) {
      if (e.getCode() != 409) {
        throw e;
      }
      existing = event.get();
    }
    if (existing == null) {
      return false; // expired (Events live about an hour) between the create and the read: create
      // again
    }
    return countUp(namespace, name, Written.of(existing), type, message, now, key);
  }

  /**
   * One JSON merge patch carrying the resourceVersion last seen: the API server refuses it with 409
   * if another repeat got in first (or 404 once the Event expired), so no increment is lost; false
   * then.
   */
  private boolean countUp(
      String namespace,
      String name,
      Written last,
      String type,
      String message,
      String now,
      String key) {
    Map<String, Object> patch = new LinkedHashMap<>();
    patch.put("metadata", Map.of("resourceVersion", last.resourceVersion()));
    patch.put("type", type);
    patch.put("message", message);
    patch.put("count", last.count() + 1);
    patch.put("lastTimestamp", now);
    // Patched through the resource itself: a patch by name alone reads the Event first.
    Event target =
        new EventBuilder()
            .withNewMetadata()
            .withNamespace(namespace)
            .withName(name)
            .withResourceVersion(last.resourceVersion())
            .endMetadata()
            .build();
    try {
      Event patched =
          client
              .v1()
              .events()
              .inNamespace(namespace)
              .resource(target)
              .patch(PatchContext.of(PatchType.JSON_MERGE), Serialization.asJson(patch));
      written.put(key, Written.of(patched));
      return true;
    } catch (KubernetesClientException e) {
      if (e.getCode() == 409 || e.getCode() == 404) {
        return false;
      }
      throw e;
    }
  }

  private static Event firstOccurrence(
      DelayedTask task, String name, String type, String reason, String message, String now) {
    String namespace = task.getMetadata().getNamespace();
    return new EventBuilder()
        .withNewMetadata()
        .withName(name)
        .withNamespace(namespace)
        .endMetadata()
        .withInvolvedObject(
            new ObjectReferenceBuilder()
                .withApiVersion(task.getApiVersion())
                .withKind(task.getKind())
                .withName(task.getMetadata().getName())
                .withNamespace(namespace)
                .withUid(task.getMetadata().getUid())
                .withResourceVersion(task.getMetadata().getResourceVersion())
                .build())
        .withType(type)
        .withReason(reason)
        .withMessage(message)
        .withFirstTimestamp(now)
        .withLastTimestamp(now)
        .withCount(1)
        .withNewSource()
        .withComponent(COMPONENT)
        .endSource()
        .build();
  }

  private static String sha256(String text) {
    try {
      return HexFormat.of()
          .formatHex(
              MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JVM has SHA-256", e);
    }
  }
}
