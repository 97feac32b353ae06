package io.delayedtask.operator.scale;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Map;
import java.util.TreeMap;

/**
 * The real API server's audit log (JSON lines, level Metadata, RequestReceived stage omitted),
 * counted per user by verb and resource. A request is counted once: at ResponseComplete, or at
 * ResponseStarted for a watch (which completes only when it ends).
 */
final class AuditLog {
  /** Everything at Metadata level: who, which verb, which object; no bodies. */
  static final String POLICY = """
      apiVersion: audit.k8s.io/v1
      kind: Policy
      omitStages: ["RequestReceived"]
      rules:
      - level: Metadata
      """;

  private static final ObjectMapper JSON = new ObjectMapper();
  private final Path file;

  AuditLog(Path file) {
    this.file = file;
  }

  Path file() {
    return file;
  }

  /** {@code user}'s requests received in [from, to], as in {@link ScaleTarget#operatorRequests}. */
  Map<String, Long> count(String user, Instant from, Instant to) {
    Map<String, Long> counts = new TreeMap<>();
    if (!Files.exists(file)) {
      return counts;
    }
    try (BufferedReader lines = Files.newBufferedReader(file)) {
      for (String line = lines.readLine(); line != null; line = lines.readLine()) {
        if (!line.contains(user)) {
          continue; // cheap filter before parsing
        }
        JsonNode event = JSON.readTree(line);
        String verb = event.path("verb").asText();
        String stage = event.path("stage").asText();
        boolean counted = verb.equals("watch") ? stage.equals("ResponseStarted") : stage.equals("ResponseComplete");
        if (!counted || !user.equals(event.path("user").path("username").asText())) {
          continue;
        }
        Instant received = Instant.parse(event.path("requestReceivedTimestamp").asText());
        if (received.isBefore(from) || received.isAfter(to)) {
          continue;
        }
        JsonNode ref = event.path("objectRef");
        String resource = ref.isMissingNode() ? event.path("requestURI").asText().replaceFirst("\\?.*", "")
            : ref.path("resource").asText() + (ref.hasNonNull("subresource") ? "/" + ref.path("subresource").asText() : "");
        int code = event.path("responseStatus").path("code").asInt(200);
        String key = verb + " " + resource + (code < 300 ? "" : " " + code);
        counts.merge(key, 1L, Long::sum);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("could not read the audit log " + file, e);
    }
    return counts;
  }
}
