package io.delayedtask.operator.sink;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.cloudevents.CloudEvent;
import io.cloudevents.core.builder.CloudEventBuilder;
import io.cloudevents.http.impl.HttpMessageWriter;
import io.cloudevents.rw.CloudEventContextWriter;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A task's CloudEvent in HTTP binary mode (docs/reference.md): the attributes as {@code ce-*}
 * headers (the task's {@code ceOverrides} among them), and either {@code spec.data} verbatim with
 * {@code Content-Type: <contentType>}, or {@code Content-Type: application/json} and the payload as
 * the JSON body. The CloudEvents SDK builds and validates the event and names the headers; only
 * {@code ce-time} is formatted here, because the SDK writes ISO_OFFSET_DATE_TIME, which drops a
 * zero fraction ({@code 07:00:00Z}) where the contract wants the status's format, three fraction
 * digits ({@code 07:00:00.000Z}).
 *
 * @param headers the headers in the order the SDK wrote them
 * @param body the body
 */
record CloudEventMessage(Map<String, String> headers, byte[] body) {
  static final String ATTEMPT_EXTENSION = "delayedtaskattempt";
  private static final String JSON = "application/json";
  private static final ObjectMapper MAPPER = new ObjectMapper();
  private static final DateTimeFormatter MILLISECONDS =
      DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSS'Z'").withZone(ZoneOffset.UTC);

  static CloudEventMessage of(DeliveryRequest.TaskEvent task) {
    CloudEventBuilder builder =
        CloudEventBuilder.v1()
            .withId(task.id())
            .withSource(URI.create(task.source()))
            .withType(DeliveryRequest.TaskEvent.TYPE)
            .withTime(task.time().atOffset(ZoneOffset.UTC))
            .withExtension(ATTEMPT_EXTENSION, task.attempt());
    task.data()
        .ifPresentOrElse(
            data ->
                builder.withData(data.contentType(), data.text().getBytes(StandardCharsets.UTF_8)),
            () -> builder.withData(JSON, json(task.payload())));
    new TreeMap<>(task.extensions()).forEach(builder::withExtension);
    CloudEvent event = builder.build();
    Map<String, String> headers = new LinkedHashMap<>();
    AtomicReference<byte[]> body = new AtomicReference<>(new byte[0]);
    new MillisecondTimeWriter(headers, body).writeBinary(event);
    return new CloudEventMessage(headers, body.get());
  }

  /**
   * The payload as a JSON object, keys sorted so equal payloads make equal bodies; {@code {}} when
   * empty.
   */
  private static byte[] json(Map<String, String> payload) {
    try {
      return MAPPER.writeValueAsBytes(new TreeMap<>(payload));
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("a map of strings always serializes", e);
    }
  }

  /** The SDK's binary-mode writer, with ce-time in the contract's format. */
  private static final class MillisecondTimeWriter extends HttpMessageWriter {
    MillisecondTimeWriter(Map<String, String> headers, AtomicReference<byte[]> body) {
      super(headers::put, body::set);
    }

    @Override
    public CloudEventContextWriter withContextAttribute(String name, OffsetDateTime value) {
      return withContextAttribute(name, MILLISECONDS.format(value));
    }
  }
}
