package io.delayedtask.operator.config;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
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
 * the receiver will see). An entry path ending in {@code /} allows the paths that begin with it; one
 * not ending in {@code /} allows itself and the paths that continue it after a {@code /}; an entry
 * without a path, or with {@code /}, allows its whole origin. A URL with userinfo or a fragment is
 * never allowed.
 */
public final class AllowedUris {
  /** An IPv4 loopback literal: 127.0.0.0/8, written as four decimal octets. */
  private static final Pattern IPV4_LOOPBACK = Pattern.compile("127(\\.(25[0-5]|2[0-4]\\d|1?\\d?\\d)){3}");
  private static final String UNRESERVED_PUNCTUATION = "-._~";

  private final List<Entry> entries;

  private AllowedUris(List<Entry> entries) {
    this.entries = List.copyOf(entries);
  }

  /**
   * One entry, parsed.
   *
   * @param text      as written
   * @param scheme    http or https
   * @param host      lower case, without a trailing dot; an IPv6 literal without brackets
   * @param port      the scheme's default when the entry names none
   * @param segments  the path's segments, normalized, without the empty one a trailing {@code /} makes
   * @param directory the path ends in {@code /} (or is {@code /} or absent)
   */
  public record Entry(String text, String scheme, String host, int port, List<String> segments, boolean directory) {
    public Entry {
      segments = List.copyOf(segments);
    }

    /** The host is a loopback name or literal: {@code localhost}, {@code 127.x.x.x} or {@code ::1}. */
    public boolean namesLoopback() {
      return host.equals("localhost") || host.equals("::1") || IPV4_LOOPBACK.matcher(host).matches();
    }

    boolean allows(HttpUrl url) {
      if (!scheme.equals(url.scheme()) || !host.equals(AllowedUris.host(url)) || port != url.port()) {
        return false;
      }
      List<String> path = normalized(url.encodedPathSegments());
      if (segments.isEmpty()) {
        return true; // the whole origin
      }
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
   * The first entry that allows {@code url}; empty when none does, or when the URL is not one an
   * entry could allow (not http(s), userinfo, a fragment: {@link #problem}).
   */
  public Optional<Entry> entryAllowing(String url) {
    if (problem(url).isPresent()) {
      return Optional.empty();
    }
    HttpUrl parsed = HttpUrl.parse(url);
    return entries.stream().filter(entry -> entry.allows(parsed)).findFirst();
  }

  /**
   * Why {@code url} can never be allowed, whatever the entries: not an absolute http(s) URL with a
   * host, userinfo ({@code user@host}, also an empty one), or a fragment. Empty when none applies.
   */
  public static Optional<String> problem(String url) {
    HttpUrl parsed = url == null ? null : HttpUrl.parse(url);
    if (parsed == null) {
      return Optional.of("it is not an absolute http:// or https:// URL with a host (and a port from 1 to 65535)");
    }
    if (!parsed.username().isEmpty() || !parsed.password().isEmpty() || rawAuthority(url).contains("@")) {
      return Optional.of("it has userinfo (the part before '@' in the host), which is never allowed; remove it");
    }
    if (parsed.fragment() != null || url.contains("#")) {
      return Optional.of("it has a fragment ('#'), which is never allowed; remove it");
    }
    return Optional.empty();
  }

  private static Entry entry(String text) {
    Optional<String> problem = problem(text);
    if (problem.isPresent()) {
      throw new IllegalArgumentException("'" + text + "': " + problem.get());
    }
    HttpUrl url = Objects.requireNonNull(HttpUrl.parse(text));
    if (url.encodedQuery() != null) {
      throw new IllegalArgumentException("'" + text + "' has a query ('?'); an entry is scheme, host, port and path");
    }
    String authority = rawAuthority(text);
    if (authority.endsWith(":")) {
      throw new IllegalArgumentException("'" + text + "' ends its host with ':' but names no port; an entry allows "
          + "one port: write it (http://127.0.0.1:8099), or leave out the ':' for the scheme's default");
    }
    List<String> segments = new ArrayList<>(normalized(url.encodedPathSegments()));
    boolean directory = segments.get(segments.size() - 1).isEmpty();
    if (directory) {
      segments.remove(segments.size() - 1);
    }
    return new Entry(text, url.scheme(), host(url), url.port(), segments, directory);
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

  /** HttpUrl's host (already lower case, IPv6 canonical) without a trailing dot: "h.example." is "h.example". */
  private static String host(HttpUrl url) {
    String host = url.host().toLowerCase(Locale.ROOT);
    return host.endsWith(".") ? host.substring(0, host.length() - 1) : host;
  }

  /**
   * The path the receiver sees: percent-encoded unreserved characters decoded ({@code %61} is
   * {@code a}, {@code %2e} is {@code .}), other escapes in upper case, then dot segments removed
   * (RFC 3986 5.2.4). HttpUrl has removed the dot segments it knows already; this repeats it on
   * the decoded segments so no encoding of {@code ..} survives.
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
      if (c == '%' && i + 2 < segment.length() && isHex(segment.charAt(i + 1)) && isHex(segment.charAt(i + 2))) {
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
    return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
        || UNRESERVED_PUNCTUATION.indexOf(c) >= 0;
  }
}
