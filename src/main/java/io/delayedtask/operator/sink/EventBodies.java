package io.delayedtask.operator.sink;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.delayedtask.operator.api.v1alpha1.DelayedTaskSpec;
import java.util.Locale;

/**
 * The body of a sink task's CloudEvent (docs/reference.md, "Delivering to a service"): {@code
 * spec.data} with {@code spec.contentType} (default {@code application/json}), or, without data,
 * the payload as a JSON object. Which content types are JSON, and whether a text is JSON.
 */
public final class EventBodies {
  private static final ObjectMapper STRICT =
      new ObjectMapper().enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

  private EventBodies() {}

  /** The content type a task's data is sent with: its contentType, or application/json. */
  public static String contentType(String contentType) {
    return contentType == null ? DelayedTaskSpec.DEFAULT_CONTENT_TYPE : contentType;
  }

  /**
   * Whether a media type is JSON: application/json, or any type/subtype ending in +json; parameters
   * ignored.
   */
  public static boolean isJson(String mediaType) {
    String base = mediaType.split(";", 2)[0].trim().toLowerCase(Locale.ROOT);
    int slash = base.indexOf('/');
    return base.equals("application/json") || (slash > 0 && base.endsWith("+json"));
  }

  /**
   * Whether the text is exactly one JSON value (an object, array, string, number, true, false or
   * null).
   */
  public static boolean isJsonText(String text) {
    if (text.isBlank()) {
      return false;
    }
    try {
      STRICT.readTree(text);
      return true;
    } catch (JsonProcessingException e) {
      return false;
    }
  }
}
