package io.delayedtask.operator.docs;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The relative links of Markdown files and whether they resolve: the file or folder must exist in
 * the repository, and an anchor into a Markdown file must name one of its headings, slugged as
 * GitHub slugs them. Links inside code (fenced blocks, inline spans) are not links.
 */
final class MarkdownLinks {
  private static final Pattern FENCE = Pattern.compile("(?ms)^\\s*```.*?^\\s*```[^\\n]*$");
  private static final Pattern INLINE_CODE = Pattern.compile("`[^`\\n]*`");
  private static final Pattern LINK =
      Pattern.compile("!?\\[[^\\]\\n]*\\]\\(([^)\\s]+)(?:\\s+\"[^\"]*\")?\\)");
  private static final Pattern HEADING =
      Pattern.compile("(?m)^#{1,6}[ \\t]+(.+?)[ \\t]*#*[ \\t]*$");

  /** One link as written, in the file that holds it. */
  record Link(Path file, String target) {
    boolean external() {
      return target.matches("(?i)[a-z][a-z0-9+.-]*:.*"); // https:, mailto:, ...
    }

    Path path() {
      int hash = target.indexOf('#');
      String path = hash < 0 ? target : target.substring(0, hash);
      Path here = file.toAbsolutePath().normalize();
      return path.isEmpty() ? here : here.getParent().resolve(path).normalize();
    }

    String anchor() {
      int hash = target.indexOf('#');
      return hash < 0 ? null : target.substring(hash + 1);
    }

    @Override
    public String toString() {
      return file + ": (" + target + ")";
    }
  }

  private final Path root;
  private final Map<Path, Set<String>> anchorsByFile = new HashMap<>();

  MarkdownLinks(Path root) {
    this.root = root.toAbsolutePath().normalize();
  }

  /** Every link in the file, code excluded. */
  static List<Link> linksIn(Path file) {
    List<Link> links = new ArrayList<>();
    Matcher matcher = LINK.matcher(withoutCode(read(file)));
    while (matcher.find()) {
      links.add(new Link(file, matcher.group(1)));
    }
    return links;
  }

  /** Why the link does not resolve, or null when it does (external links are not followed). */
  String problem(Link link) {
    if (link.external()) {
      return null;
    }
    Path target = link.path();
    if (!target.startsWith(root)) {
      return "points outside the repository";
    }
    if (!Files.exists(target)) {
      return "no such file or folder: " + root.relativize(target);
    }
    String anchor = link.anchor();
    if (anchor == null || !target.toString().endsWith(".md")) {
      return null;
    }
    Set<String> anchors = anchorsByFile.computeIfAbsent(target, MarkdownLinks::headingAnchors);
    return anchors.contains(anchor)
        ? null
        : "no heading #" + anchor + " in " + root.relativize(target);
  }

  /**
   * The anchors GitHub gives the headings of a Markdown file: slugs, repeats suffixed -1, -2, ...
   */
  static Set<String> headingAnchors(Path file) {
    Set<String> anchors = new LinkedHashSet<>();
    Map<String, Integer> seen = new HashMap<>();
    Matcher heading = HEADING.matcher(withoutFences(read(file)));
    while (heading.find()) {
      String slug = slug(heading.group(1));
      int count = seen.merge(slug, 1, Integer::sum);
      anchors.add(count == 1 ? slug : slug + "-" + (count - 1));
    }
    return anchors;
  }

  /** GitHub's heading slug: lower case, punctuation dropped (but '-' and '_'), spaces to '-'. */
  static String slug(String heading) {
    String text =
        heading.replaceAll("\\[([^\\]]*)\\]\\([^)]*\\)", "$1"); // a link in a heading: its text
    return text.toLowerCase(Locale.ROOT).replaceAll("[^\\p{L}\\p{N} _-]", "").replace(' ', '-');
  }

  private static String withoutCode(String markdown) {
    return INLINE_CODE.matcher(withoutFences(markdown)).replaceAll("");
  }

  private static String withoutFences(String markdown) {
    return FENCE.matcher(markdown).replaceAll("");
  }

  private static String read(Path file) {
    try {
      return Files.readString(file);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
