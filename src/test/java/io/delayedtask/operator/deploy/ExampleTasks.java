package io.delayedtask.operator.deploy;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

/** The example DelayedTasks of k8s/examples/, one per file. */
final class ExampleTasks {

  static final String STATUS_ONLY = "status-only.yaml";
  static final String JOB_RUN_AT = "job-run-at.yaml";
  static final String JOB_DELAY = "job-delay.yaml";
  static final String SUSPENDED = "suspended.yaml";
  static final String DEADLINE_TTL = "deadline-ttl.yaml";
  static final String TIMEZONE_RUN_AT = "timezone-runat.yaml";
  static final String SINK_SERVICE = "sink-service.yaml";
  static final String SINK_RETRY = "sink-retry.yaml";

  /** The receiver's Deployment and Service beside the task: works on any cluster. */
  static final String SINK_RECEIVER = "sink-receiver.yaml";

  /** A paused DelayedTaskQueue and a task that names it. */
  static final String QUEUE_PAUSED = "queue-paused.yaml";

  /** Needs Knative Eventing (a Broker): only the task is in the file. */
  static final String KNATIVE_BROKER = "knative-broker-sink.yaml";

  private ExampleTasks() {}

  static List<Path> files() {
    try (Stream<Path> files = Files.list(Manifests.EXAMPLES)) {
      return files.filter(p -> p.toString().endsWith(".yaml")).sorted().toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * The file's DelayedTask document (a file may hold what the task needs beside it, such as a
   * receiver).
   */
  static String yaml(String file) {
    String text;
    try {
      text = Files.readString(Manifests.EXAMPLES.resolve(file));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    List<String> tasks =
        java.util.Arrays.stream(text.split("(?m)^---\\s*$"))
            .filter(document -> document.lines().anyMatch(line -> line.equals("kind: DelayedTask")))
            .toList();
    if (tasks.size() != 1) {
      throw new IllegalStateException(file + " holds " + tasks.size() + " DelayedTasks, not one");
    }
    return tasks.get(0);
  }

  /** Every document of the file, as the API server would read it. */
  static List<io.fabric8.kubernetes.api.model.HasMetadata> objects(String file) {
    return Manifests.read(Manifests.EXAMPLES.resolve(file));
  }

  static DelayedTask task(String file) {
    return Manifests.SERIALIZATION.unmarshal(yaml(file), DelayedTask.class);
  }
}
