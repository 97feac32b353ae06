package io.delayedtask.operator.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The README, the pages under docs/ (and docs/development/), the chart's README, SECURITY.md and
 * CHANGELOG.md link each other and into the repository: every relative link must resolve (the file,
 * and the heading an anchor names), and the README must lead to every page. A moved section or a
 * renamed file fails here instead of in a reader's browser.
 */
class DocLinksTest {
  private static final Path README = Path.of("README.md");
  private static final Path DOCS = Path.of("docs");

  @Test
  void everyRelativeLinkAndAnchorResolves() throws IOException {
    MarkdownLinks links = new MarkdownLinks(Path.of("."));
    List<MarkdownLinks.Link> all =
        pages().flatMap(page -> MarkdownLinks.linksIn(page).stream()).toList();

    assertThat(all)
        .as("links found in README.md and docs/*.md")
        .hasSizeGreaterThan(40)
        .anyMatch(link -> link.anchor() != null);
    assertThat(all)
        .as("broken links")
        .allSatisfy(link -> assertThat(links.problem(link)).as("%s", link).isNull());
  }

  @Test
  void theReadmeLinksEveryPageUnderDocs() throws IOException {
    List<Path> linked =
        MarkdownLinks.linksIn(README).stream()
            .filter(link -> !link.external())
            .map(MarkdownLinks.Link::path)
            .toList();
    try (Stream<Path> docs = markdownUnderDocs()) {
      assertThat(docs.map(page -> page.toAbsolutePath().normalize()))
          .as("pages under docs/ the README does not link")
          .allMatch(linked::contains);
    }
  }

  @Test
  void aMissingFileOrHeadingIsReported(@TempDir Path dir) throws IOException {
    Files.writeString(dir.resolve("other.md"), "# Other page\n\n## Twice\n\n## Twice\n");
    Path page = dir.resolve("page.md");
    Files.writeString(
        page,
        """
        # Page
        [fine](other.md#other-page) [second of two](other.md#twice-1) [self](#page) [web](https://example.org/x)
        [no file](gone.md) [no heading](other.md#nowhere) `[in code](gone.md)`
        ```
        [in a block](gone.md)
        ```
        """);
    MarkdownLinks links = new MarkdownLinks(dir);

    assertThat(MarkdownLinks.linksIn(page))
        .extracting(link -> link.target() + " -> " + links.problem(link))
        .containsExactly(
            "other.md#other-page -> null",
            "other.md#twice-1 -> null",
            "#page -> null",
            "https://example.org/x -> null",
            "gone.md -> no such file or folder: gone.md",
            "other.md#nowhere -> no heading #nowhere in other.md");
  }

  @Test
  void headingsAreSluggedAsGitHubDoes() {
    assertThat(MarkdownLinks.slug("Delivering to a service (`sink`)"))
        .isEqualTo("delivering-to-a-service-sink");
    assertThat(MarkdownLinks.slug("Finished tasks: the TTL rule"))
        .isEqualTo("finished-tasks-the-ttl-rule");
    assertThat(MarkdownLinks.slug("RBAC: what each rule is for"))
        .isEqualTo("rbac-what-each-rule-is-for");
  }

  @Test
  void theReadmeLinksTheChartReadmeAndTheProjectFilesAdoptersLookFor() {
    List<Path> linked =
        MarkdownLinks.linksIn(README).stream()
            .filter(link -> !link.external())
            .map(MarkdownLinks.Link::path)
            .toList();
    assertThat(OTHER_PAGES.stream().map(page -> page.toAbsolutePath().normalize()))
        .allMatch(linked::contains);
    assertThat(
            Stream.of("LICENSE", "NOTICE", "THIRD-PARTY-NOTICES.md")
                .map(f -> Path.of(f).toAbsolutePath().normalize()))
        .allMatch(linked::contains);
  }

  @Test
  void userDocsNameNoIssueOfTheTracker() throws IOException {
    List<Path> userPages =
        pages().filter(page -> !page.startsWith(DOCS.resolve("development"))).toList();
    for (Path page : userPages) {
      assertThat(Files.readAllLines(page))
          .as("%s: issue numbers belong in docs/development/", page)
          .noneMatch(line -> line.matches("(?i).*\\bissues? \\d+.*"));
    }
  }

  /** Pages outside docs/ that the README leads to and whose links must resolve too. */
  private static final List<Path> OTHER_PAGES =
      List.of(
          Path.of("helm", "delayed-task-operator", "README.md"),
          Path.of("SECURITY.md"),
          Path.of("CHANGELOG.md"));

  private static Stream<Path> pages() throws IOException {
    return Stream.of(Stream.of(README), OTHER_PAGES.stream(), markdownUnderDocs().toList().stream())
        .flatMap(s -> s);
  }

  /**
   * docs/**.md; docs/development/scale-output/ and docs/bench-output/ hold raw run output, not
   * pages.
   */
  private static Stream<Path> markdownUnderDocs() throws IOException {
    try (Stream<Path> files = Files.walk(DOCS)) {
      return files.filter(path -> path.toString().endsWith(".md")).sorted().toList().stream();
    }
  }
}
