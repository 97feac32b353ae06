package io.delayedtask.operator;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Properties;

/**
 * The version and git commit this jar was built from. The build writes them (exec-maven-plugin,
 * generate-resources) into {@value #RESOURCE}; a class path without that file (an IDE that skipped
 * the Maven build) reads as "unknown".
 */
record BuildInfo(String version, String commit) {
  static final String RESOURCE = "META-INF/delayed-task-operator/build.properties";
  private static final String UNKNOWN = "unknown";

  static BuildInfo ofThisBuild() {
    Properties properties = new Properties();
    try (InputStream in = BuildInfo.class.getClassLoader().getResourceAsStream(RESOURCE)) {
      if (in != null) {
        properties.load(in);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + RESOURCE, e);
    }
    return new BuildInfo(
        nonBlank(properties.getProperty("version")), nonBlank(properties.getProperty("commit")));
  }

  /** One line: {@code delayed-task-operator 0.1.0 (commit 6bdbe47...)}. */
  String line() {
    return "delayed-task-operator " + version + " (commit " + commit + ")";
  }

  private static String nonBlank(String value) {
    return value == null || value.isBlank() ? UNKNOWN : value.trim();
  }
}
