package io.delayedtask.operator.api.v1alpha1;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.BeanDescription;
import com.fasterxml.jackson.databind.DatabindException;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.JavaType;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.deser.std.StdDeserializer;
import com.fasterxml.jackson.databind.introspect.AnnotatedMember;
import com.fasterxml.jackson.databind.introspect.BeanPropertyDefinition;
import java.io.IOException;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;
import java.util.function.Supplier;
import java.util.stream.Collectors;

/**
 * Reads spec or status property by property, so that no field can fail the whole object.
 *
 * <p>Why: fabric8's informers stop for good on a deserialization error (retrying cannot help), and
 * JOSDK then stops the operator, so one task with a field of the wrong type (which an API server
 * without our schema lets through) would stop the firing of every task. Here such a field is left
 * unset and described, naming it, in the object's unreadable list; the validator turns that into
 * phase Invalid. Fields this version does not know (a newer CRD) are ignored. The properties are
 * the class's own Jackson properties, so a field added to the class is read without a change here.
 */
abstract class LenientDeserializer<T> extends StdDeserializer<T> {
  private static final int SHOWN_VALUE_LENGTH = 60;

  private final String path;
  private final Supplier<T> factory;
  private final BiConsumer<T, List<String>> unreadable;

  /**
   * The largest JSON, in bytes, kept of a property (by name); a larger one is left unset and named.
   */
  private final Map<String, Integer> largestBytes;

  /**
   * The class's settable properties, introspected once: every informer event, clone and API answer
   * reads a spec and a status, and introspecting the class each time cost more than the reading.
   */
  private volatile List<Property> properties;

  /** A property to set: its JSON name, its setter or field, and its type. */
  private record Property(String name, AnnotatedMember mutator, JavaType type) {}

  /**
   * {@code path} names the object in messages ("spec"); {@code unreadable} receives the problems.
   */
  LenientDeserializer(
      Class<T> type, String path, Supplier<T> factory, BiConsumer<T, List<String>> unreadable) {
    this(type, path, factory, unreadable, Map.of());
  }

  /**
   * {@code largestBytes}: for these properties, a value whose JSON is longer is not read at all (so
   * it is not kept in the informer's cache either, where every task lives) and is named instead.
   */
  LenientDeserializer(
      Class<T> type,
      String path,
      Supplier<T> factory,
      BiConsumer<T, List<String>> unreadable,
      Map<String, Integer> largestBytes) {
    super(type);
    this.path = path;
    this.factory = factory;
    this.unreadable = unreadable;
    this.largestBytes = Map.copyOf(largestBytes);
  }

  @Override
  public T deserialize(JsonParser parser, DeserializationContext context) throws IOException {
    JsonNode tree = context.readTree(parser);
    T bean = factory.get();
    List<String> problems = new ArrayList<>();
    if (!tree.isObject()) {
      problems.add(path + " must be an object, not " + shown(tree));
      unreadable.accept(bean, problems);
      return bean;
    }
    for (Property property : properties(context)) {
      JsonNode value = tree.get(property.name());
      if (value == null || value.isNull()) {
        continue;
      }
      Integer largest = largestBytes.get(property.name());
      if (largest != null) {
        long bytes = jsonBytes(value);
        if (bytes > largest) {
          problems.add(
              path
                  + "."
                  + property.name()
                  + " is "
                  + bytes
                  + " bytes as JSON, more than the "
                  + largest
                  + " allowed; move large scripts or data into a ConfigMap or Secret the Job mounts");
          continue;
        }
      }
      JavaType type = property.type();
      try {
        property.mutator().setValue(bean, context.readTreeAsValue(value, type));
      } catch (DatabindException e) {
        problems.add(describe(property.name(), value, type, e));
      } catch (IOException | RuntimeException e) {
        problems.add(
            path + "." + property.name() + " must be " + expected(type) + ", not " + shown(value));
      }
    }
    unreadable.accept(bean, problems);
    return bean;
  }

  /** The length of {@code value} written as compact JSON, in UTF-8 bytes. */
  private static long jsonBytes(JsonNode value) throws IOException {
    CountingStream counter = new CountingStream();
    try (JsonGenerator generator = JSON.createGenerator(counter)) {
      generator.writeTree(value);
    }
    return counter.count;
  }

  private static final JsonFactory JSON =
      new com.fasterxml.jackson.databind.ObjectMapper().getFactory();

  private static final class CountingStream extends OutputStream {
    long count;

    @Override
    public void write(int b) {
      count++;
    }

    @Override
    public void write(byte[] b, int off, int len) {
      count += len;
    }
  }

  private List<Property> properties(DeserializationContext context) {
    List<Property> known = properties;
    if (known == null) {
      BeanDescription description =
          context.getConfig().introspect(context.constructType(handledType()));
      List<Property> found = new ArrayList<>();
      for (BeanPropertyDefinition property : description.findProperties()) {
        AnnotatedMember mutator = property.getNonConstructorMutator();
        if (mutator != null) {
          found.add(new Property(property.getName(), mutator, property.getPrimaryType()));
        }
      }
      known = List.copyOf(found);
      properties = known;
    }
    return known;
  }

  private String describe(String field, JsonNode value, JavaType type, DatabindException e) {
    // A nested field (spec.jobTemplate.spec.backoffLimit: "x"): name the innermost one.
    List<JsonMappingException.Reference> inner =
        e instanceof JsonMappingException m ? m.getPath() : List.of();
    String innerPath =
        inner.stream()
            .map(
                ref ->
                    ref.getFieldName() != null
                        ? "." + ref.getFieldName()
                        : "[" + ref.getIndex() + "]")
            .collect(Collectors.joining());
    if (innerPath.isEmpty()) {
      return path + "." + field + " must be " + expected(type) + ", not " + shown(value);
    }
    return path
        + "."
        + field
        + innerPath
        + " has the wrong type ("
        + firstLine(e.getOriginalMessage())
        + "); "
        + path
        + "."
        + field
        + " must be "
        + expected(type);
  }

  /** What a user should write, in words. */
  private static String expected(JavaType type) {
    Class<?> raw = type.getRawClass();
    if (raw == Boolean.class || raw == boolean.class) {
      return "true or false";
    }
    if (raw == Long.class || raw == Integer.class || raw == long.class || raw == int.class) {
      return "a whole number";
    }
    if (raw == String.class) {
      return "a string";
    }
    if (raw.isEnum()) {
      return "one of "
          + Arrays.stream(raw.getEnumConstants())
              .map(Object::toString)
              .collect(Collectors.joining(", "));
    }
    if (Map.class.isAssignableFrom(raw)) {
      return "a map of " + expected(type.getContentType()).replaceFirst("^an? ", "") + " values";
    }
    if (type.isCollectionLikeType()) {
      return "a list";
    }
    return "an object (" + raw.getSimpleName() + ")";
  }

  private static String shown(JsonNode value) {
    String text = value.toString();
    return text.length() <= SHOWN_VALUE_LENGTH
        ? text
        : text.substring(0, SHOWN_VALUE_LENGTH) + "...";
  }

  private static String firstLine(String message) {
    if (message == null) {
      return "unreadable";
    }
    int end = message.indexOf('\n');
    String line = end < 0 ? message : message.substring(0, end);
    return line.length() <= 120 ? line : line.substring(0, 120) + "...";
  }
}
