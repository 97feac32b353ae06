package io.delayedtask.operator.config;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;
import okhttp3.HttpUrl;

/**
 * The entries of DELAYEDTASK_SINK_ALLOWED_URIS and what they allow (docs/reference.md, "Delivering
 * to a service"). Entries and URLs are parsed by OkHttp's {@link HttpUrl}, the parser of the client
 * that sends the request, and compared part by part, never as strings: scheme, host
 * (case-insensitive, a trailing dot ignored), port (the scheme's default when absent), and path
 * segments after decoding percent-encoded unreserved characters and removing dot segments (the path
 * the receiver will see). An entry path ending in {@code /} allows the paths that begin with it;
 * one not ending in {@code /} allows itself and the paths that continue it after a {@code /}; an
 * entry without a path, or with {@code /}, allows its whole origin. A URL with userinfo or a
 * fragment is never allowed, and a URL whose path a receiver could read as another path ({@link
 * #ambiguousPath}: a segment holding {@code ;}, or a percent-encoded {@code /}, {@code \}, {@code
 * .} or {@code %}) is never allowed by an entry that restricts the path.
 *
 * <p>An entry may hold {@value #NAMESPACE} as a whole host label or a whole path segment: it then
 * stands for the task's own namespace there, and for no other ({@link #entryAllowing(String,
 * String)}).
 */
public final class AllowedUris {
  /** An IPv4 loopback literal: 127.0.0.0/8, written as four decimal octets. */
  private static final Pattern IPV4_LOOPBACK =
      Pattern.compile("127(\\.(25[0-5]|2[0-4]\\d|1?\\d?\\d)){3}");

  private static final String UNRESERVED_PUNCTUATION = "-._~";

  /** The placeholder for the task's namespace in an entry. */
  public static final String NAMESPACE = "{namespace}";

  /**
   * What {@link #NAMESPACE} is parsed as: a host label and path segment OkHttp takes as written and
   * that no namespace can be (a namespace is a DNS label, without '_').
   */
  private static final String NAMESPACE_MARK = "_namespace_";

  /** A namespace: an RFC 1123 DNS label. */
  private static final Pattern DNS_LABEL = Pattern.compile("[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?");

  /** Percent-encoded characters that make a path segment read as another path by some receivers. */
  private static final Map<String, String> AMBIGUOUS_ESCAPES =
      Map.of(
          "%2F",
          "a percent-encoded '/' (%2F)",
          "%5C",
          "a percent-encoded '\\' (%5C)",
          "%2E",
          "a percent-encoded '.' (%2E)",
          "%25",
          "a percent-encoded '%' (%25)",
          "%3B",
          "a percent-encoded ';' (%3B)");

  private final List<Entry> entries;

  private AllowedUris(List<Entry> entries) {
    this.entries = List.copyOf(entries);
  }

  /**
   * One entry, parsed.
   *
   * @param text as written
   * @param scheme http or https
   * @param host lower case, without a trailing dot; an IPv6 literal without brackets
   * @param port the scheme's default when the entry names none
   * @param segments the path's segments, normalized, without the empty one a trailing {@code /}
   *     makes
   * @param directory the path ends in {@code /} (or is {@code /} or absent)
   */
  public record Entry(
      String text, String scheme, String host, int port, List<String> segments, boolean directory) {
    public Entry {
      segments = List.copyOf(segments);
    }

    /**
     * The host is a loopback name or literal: {@code localhost}, {@code 127.x.x.x} or {@code ::1}.
     */
    public boolean namesLoopback() {
      return host.equals("localhost")
          || host.equals("::1")
          || IPV4_LOOPBACK.matcher(host).matches();
    }

    /** Whether the entry holds {@value AllowedUris#NAMESPACE} (in its host or its path). */
    public boolean perNamespace() {
      return hostLabels().contains(NAMESPACE_MARK) || segments.contains(NAMESPACE_MARK);
    }

    private List<String> hostLabels() {
      return List.of(host.split("\\.", -1));
    }

    /**
     * This entry for the tasks of {@code namespace}: {@value AllowedUris#NAMESPACE} replaced by it;
     * empty when the entry holds the placeholder and {@code namespace} is none (or no namespace).
     */
    Optional<Entry> forNamespace(String namespace) {
      if (!perNamespace()) {
        return Optional.of(this);
      }
      if (namespace == null || !DNS_LABEL.matcher(namespace).matches()) {
        return Optional.empty();
      }
      String concreteHost =
          String.join(
              ".",
              hostLabels().stream()
                  .map(label -> label.equals(NAMESPACE_MARK) ? namespace : label)
                  .toList());
      List<String> concreteSegments =
          segments.stream()
              .map(segment -> segment.equals(NAMESPACE_MARK) ? namespace : segment)
              .toList();
      return Optional.of(new Entry(text, scheme, concreteHost, port, concreteSegments, directory));
    }

    boolean allows(HttpUrl url) {
      if (!scheme.equals(url.scheme())
          || !host.equals(AllowedUris.host(url))
          || port != url.port()) {
        return false;
      }
      if (segments.isEmpty()) {
        return true; // the whole origin
      }
      if (ambiguousPath(url).isPresent()) {
        return false; // the entry restricts the path, and a receiver may read this one as another
      }
      List<String> path = normalized(url.encodedPathSegments());
      if (path.size() < segments.size() || !path.subList(0, segments.size()).equals(segments)) {
        return false;
      }
      // "/acme/" needs something after its slash (if only the empty segment of "/acme/");
      // "/acme" allows itself and "/acme/...", and "/acmex" never got here (segments differ).
      return !directory || path.size() > segments.size();
    }
  }

  /** Nothing allowed: the default. */
  public static AllowedUris none() {
    return new AllowedUris(List.of());
  }

  /**
   * Parses the entries.
   *
   * @throws IllegalArgumentException naming the first bad entry and why
   */
  public static AllowedUris of(List<String> texts) {
    List<Entry> parsed = new ArrayList<>();
    for (String text : texts) {
      parsed.add(entry(text));
    }
    return new AllowedUris(parsed);
  }

  public List<Entry> entries() {
    return entries;
  }

  public boolean isEmpty() {
    return entries.isEmpty();
  }

  /**
   * The first entry that allows {@code url}, not counting the entries that hold {@value
   * #NAMESPACE}; empty when none does, or when the URL is not one an entry could allow (not
   * http(s), userinfo, a fragment: {@link #problem}).
   */
  public Optional<Entry> entryAllowing(String url) {
    return entryAllowing(url, null);
  }

  /**
   * The first entry that allows {@code url} for a task of {@code namespace}: an entry holding
   * {@value #NAMESPACE} allows it only with that namespace in the placeholder's place. The entry
   * returned is the one as written (its {@link Entry#text} names it).
   */
  public Optional<Entry> entryAllowing(String url, String namespace) {
    if (problem(url).isPresent()) {
      return Optional.empty();
    }
    HttpUrl parsed = HttpUrl.parse(url);
    return entries.stream()
        .filter(
            entry ->
                entry
                    .forNamespace(namespace)
                    .map(concrete -> concrete.allows(parsed))
                    .orElse(false))
        .findFirst();
  }

  /**
   * Why a receiver could read the path of {@code url} as another path: a segment holding {@code ;}
   * (Tomcat and Spring take {@code ..;} for {@code ..}), or a percent-encoded {@code /}, {@code \},
   * {@code .}, {@code ;} or {@code %} (a proxy that decodes first, such as nginx, sees other
   * segments: {@code %2F}, {@code %5C}, {@code %2e%2e}, {@code %252e}). Such a URL is never allowed
   * by an entry that restricts the path. Empty when the path is plain, or {@code url} is no http(s)
   * URL.
   */
  public static Optional<String> ambiguousPath(String url) {
    HttpUrl parsed = url == null ? null : HttpUrl.parse(url);
    return parsed == null ? Optional.empty() : ambiguousPath(parsed);
  }

  private static Optional<String> ambiguousPath(HttpUrl url) {
    for (String segment : url.encodedPathSegments()) {
      if (segment.contains(";")) {
        return Optional.of("its path segment '" + segment + "' holds ';'");
      }
      String upper = segment.toUpperCase(Locale.ROOT);
      for (Map.Entry<String, String> escape : AMBIGUOUS_ESCAPES.entrySet()) {
        if (upper.contains(escape.getKey())) {
          return Optional.of("its path segment '" + segment + "' holds " + escape.getValue());
        }
      }
    }
    return Optional.empty();
  }

  /**
   * Why no entry allows {@code url} for a task of {@code namespace}, in words for a status message,
   * beyond "no entry allows it": the URL can never be allowed ({@link #problem}), or its path is
   * ambiguous while an entry of its origin restricts the path. Empty when there is nothing more to
   * say.
   */
  public Optional<String> whyRefused(String url, String namespace) {
    Optional<String> never = problem(url);
    if (never.isPresent()) {
      return never;
    }
    HttpUrl parsed = HttpUrl.parse(url);
    Optional<String> ambiguous = ambiguousPath(parsed);
    if (ambiguous.isPresent()
        && entries.stream()
            .map(entry -> entry.forNamespace(namespace))
            .flatMap(Optional::stream)
            .anyMatch(
                entry ->
                    !entry.segments().isEmpty()
                        && entry.scheme().equals(parsed.scheme())
                        && entry.host().equals(host(parsed))
                        && entry.port() == parsed.port())) {
      return Optional.of(
          ambiguous.get()
              + ", which a receiver could read as another path, so no entry that "
              + "restricts the path allows it; write the path plainly");
    }
    return Optional.empty();
  }

  /**
   * Why {@code url} can never be allowed, whatever the entries: not an absolute http(s) URL with a
   * host, userinfo ({@code user@host}, also an empty one), or a fragment. Empty when none applies.
   */
  public static Optional<String> problem(String url) {
    HttpUrl parsed = url == null ? null : HttpUrl.parse(url);
    if (parsed == null) {
      return Optional.of(
          "it is not an absolute http:// or https:// URL with a host (and a port from 1 to 65535)");
    }
    if (!parsed.username().isEmpty()
        || !parsed.password().isEmpty()
        || rawAuthority(url).contains("@")) {
      return Optional.of(
          "it has userinfo (the part before '@' in the host), which is never allowed; remove it");
    }
    if (parsed.fragment() != null || url.contains("#")) {
      return Optional.of("it has a fragment ('#'), which is never allowed; remove it");
    }
    return Optional.empty();
  }

  private static Entry entry(String text) {
    String marked = placeholdersMarked(text);
    Optional<String> problem = problem(marked);
    if (problem.isPresent()) {
      throw new IllegalArgumentException("'" + text + "': " + problem.get());
    }
    HttpUrl url = Objects.requireNonNull(HttpUrl.parse(marked));
    if (url.encodedQuery() != null) {
      throw new IllegalArgumentException(
          "'" + text + "' has a query ('?'); an entry is scheme, host, port and path");
    }
    String authority = rawAuthority(marked);
    if (authority.endsWith(":")) {
      throw new IllegalArgumentException(
          "'"
              + text
              + "' ends its host with ':' but names no port; an entry allows "
              + "one port: write it (http://127.0.0.1:8099), or leave out the ':' for the scheme's default");
    }
    List<String> segments = new ArrayList<>(normalized(url.encodedPathSegments()));
    boolean directory = segments.get(segments.size() - 1).isEmpty();
    if (directory) {
      segments.remove(segments.size() - 1);
    }
    return new Entry(text, url.scheme(), host(url), url.port(), segments, directory);
  }

  /**
   * {@code text} with each {@value #NAMESPACE} that is a whole host label or a whole path segment
   * replaced by {@link #NAMESPACE_MARK}.
   *
   * @throws IllegalArgumentException for a placeholder elsewhere (part of a label or segment, in
   *     the port or the query) or any other {@code {...}}
   */
  private static String placeholdersMarked(String text) {
    if (!text.contains("{") && !text.contains("}")) {
      return text;
    }
    String misplaced =
        "'"
            + text
            + "': "
            + NAMESPACE
            + " may stand only as a whole host label "
            + "(https://"
            + NAMESPACE
            + ".hooks.example.com/) or a whole path segment "
            + "(http://broker-ingress.knative-eventing.svc.cluster.local/"
            + NAMESPACE
            + "/)";
    int start = text.indexOf("://");
    if (start < 0) {
      throw new IllegalArgumentException(misplaced);
    }
    String authority = rawAuthority(text);
    int pathStart = start + 3 + authority.length();
    String rest = text.substring(pathStart);
    StringBuilder out = new StringBuilder(text.substring(0, start + 3));
    List<String> labels = new ArrayList<>();
    for (String label : authority.split("\\.", -1)) {
      labels.add(label.equals(NAMESPACE) ? NAMESPACE_MARK : label);
    }
    out.append(String.join(".", labels));
    int queryAt = rest.indexOf('?');
    String path = queryAt < 0 ? rest : rest.substring(0, queryAt);
    List<String> segments = new ArrayList<>();
    for (String segment : path.split("/", -1)) {
      segments.add(segment.equals(NAMESPACE) ? NAMESPACE_MARK : segment);
    }
    out.append(String.join("/", segments));
    if (queryAt >= 0) {
      out.append(rest.substring(queryAt));
    }
    String marked = out.toString();
    if (marked.contains("{") || marked.contains("}")) {
      throw new IllegalArgumentException(
          marked.contains(NAMESPACE)
              ? misplaced
              : "'"
                  + text
                  + "' holds '{' or '}'; the only placeholder an entry takes is "
                  + NAMESPACE);
    }
    return marked;
  }

  /** The authority as written: after "://", up to the first '/', '\', '?' or '#'. */
  private static String rawAuthority(String url) {
    int start = url.indexOf("://");
    String rest = start < 0 ? url : url.substring(start + 3);
    int end = rest.length();
    for (char stop : new char[] {'/', '\\', '?', '#'}) {
      int at = rest.indexOf(stop);
      if (at >= 0) {
        end = Math.min(end, at);
      }
    }
    return rest.substring(0, end);
  }

  /**
   * HttpUrl's host (already lower case, IPv6 canonical) without a trailing dot: "h.example." is
   * "h.example".
   */
  private static String host(HttpUrl url) {
    String host = url.host().toLowerCase(Locale.ROOT);
    return host.endsWith(".") ? host.substring(0, host.length() - 1) : host;
  }

  /**
   * The path the receiver sees: percent-encoded unreserved characters decoded ({@code %61} is
   * {@code a}, {@code %2e} is {@code .}), other escapes in upper case, then dot segments removed
   * (RFC 3986 5.2.4). HttpUrl has removed the dot segments it knows already; this repeats it on the
   * decoded segments so no encoding of {@code ..} survives.
   */
  static List<String> normalized(List<String> encodedSegments) {
    List<String> out = new ArrayList<>();
    int last = encodedSegments.size() - 1;
    for (int i = 0; i <= last; i++) {
      String segment = decodeUnreserved(encodedSegments.get(i));
      if (segment.equals(".") || segment.equals("..")) {
        if (segment.equals("..") && !out.isEmpty()) {
          out.remove(out.size() - 1);
        }
        if (i == last) {
          out.add(""); // "/a/b/.." is "/a/"
        }
      } else {
        out.add(segment);
      }
    }
    if (out.isEmpty()) {
      out.add("");
    }
    return out;
  }

  private static String decodeUnreserved(String segment) {
    StringBuilder out = new StringBuilder(segment.length());
    for (int i = 0; i < segment.length(); i++) {
      char c = segment.charAt(i);
      if (c == '%'
          && i + 2 < segment.length()
          && isHex(segment.charAt(i + 1))
          && isHex(segment.charAt(i + 2))) {
        char decoded = (char) Integer.parseInt(segment.substring(i + 1, i + 3), 16);
        if (isUnreserved(decoded)) {
          out.append(decoded);
        } else {
          out.append('%').append(segment.substring(i + 1, i + 3).toUpperCase(Locale.ROOT));
        }
        i += 2;
      } else {
        out.append(c);
      }
    }
    return out.toString();
  }

  private static boolean isHex(char c) {
    return Character.digit(c, 16) >= 0 && c < 128;
  }

  private static boolean isUnreserved(char c) {
    return c >= 'a' && c <= 'z'
        || c >= 'A' && c <= 'Z'
        || c >= '0' && c <= '9'
        || UNRESERVED_PUNCTUATION.indexOf(c) >= 0;
  }
}
