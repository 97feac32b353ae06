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

  private ExampleTasks() {
  }

  static List<Path> files() {
    try (Stream<Path> files = Files.list(Manifests.EXAMPLES)) {
      return files.filter(p -> p.toString().endsWith(".yaml")).sorted().toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static String yaml(String file) {
    try {
      return Files.readString(Manifests.EXAMPLES.resolve(file));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static DelayedTask task(String file) {
    return Manifests.SERIALIZATION.unmarshal(yaml(file), DelayedTask.class);
  }
}
