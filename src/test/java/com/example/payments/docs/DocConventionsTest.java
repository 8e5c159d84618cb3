package com.example.payments.docs;

import java.io.IOException;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.empty;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.lessThanOrEqualTo;

/**
 * What keeps the documentation honest without running the service: every relative link of README.md and docs/
 * resolves (file and heading anchor), every curl example is runnable or visibly marked illustrative
 * ({@link Docs}), illustrative examples stay rare, the README stays a five-minute read, and nothing the repository
 * holds points at a document a forker does not get.
 */
class DocConventionsTest {

    private static final Pattern LINK = Pattern.compile("\\[[^\\]]*]\\(([^)\\s]+)\\)");
    private static final Pattern CODE_SPAN = Pattern.compile("`[^`]*`");
    /**
     * Pointers to documents outside the repository: the team's design contract and style guide, issue numbers, the
     * seed articles and their parts, the workspace's shared folder.
     */
    private static final Pattern OUTSIDE = Pattern.compile(
            "DESIGN(\\.md| §)|STYLE\\.md|\\bissues? #?[0-9]+\\b|\\bseeds/|design notes|\\bPart [0-9]+ of\\b|\\.\\./shared\\b");
    /** Not scanned: build output, tools, raw load-test results. Reports are: their readings are written by hand. */
    private static final Pattern NOT_SCANNED = Pattern.compile("\\.git|target|\\.tools|node_modules|results");

    @Test
    void everyRelativeLinkResolvesToAFileAndHeading() {
        List<String> broken = new ArrayList<>();
        int links = 0;
        for (Path file : Docs.files()) {
            List<String> prose = Docs.prose(file);
            for (int i = 0; i < prose.size(); i++) {
                Matcher link = LINK.matcher(CODE_SPAN.matcher(prose.get(i)).replaceAll(""));
                while (link.find()) {
                    String target = link.group(1);
                    if (target.matches("^[a-z]+:.*")) {
                        continue;        // https:, mailto: — not ours to check offline
                    }
                    links++;
                    String problem = problem(file, target);
                    if (problem != null) {
                        broken.add(file + ":" + (i + 1) + ": " + target + " (" + problem + ")");
                    }
                }
            }
        }
        assertThat("relative links checked", links, greaterThan(30));
        assertThat("broken relative links", broken, empty());
    }

    @Test
    void everyCurlExampleIsRunnableOrMarkedIllustrative() {
        List<String> unmarked = new ArrayList<>();
        int runnable = 0;
        int illustrative = 0;
        for (Path file : Docs.files()) {
            for (Docs.Block block : Docs.blocks(file)) {
                if (block.runnable()) {
                    runnable++;
                } else if (block.illustrative()) {
                    illustrative++;
                } else if (block.hasCurl()) {
                    unmarked.add(block.file() + ":" + block.line() + " (```" + block.language() + ")");
                }
            }
        }
        assertThat("curl examples neither in a ```console block nor marked '" + Docs.ILLUSTRATIVE + " ...-->'",
                   unmarked, empty());
        assertThat("runnable examples", runnable, greaterThan(10));
        assertThat("illustrative examples must stay rare", illustrative, lessThanOrEqualTo(runnable / 5));
    }

    @Test
    void theReadmeStaysUnderTenKilobytes() throws Exception {
        assertThat("README.md bytes", Files.size(Path.of("README.md")) <= 10 * 1024, is(true));
    }

    @Test
    void ciRunsTheReadmesTestCommandThroughTheWrapper() throws Exception {
        List<String> readme = Docs.lines(Path.of("README.md"));
        String command = "./mvnw -B verify";
        assertThat("README.md shows the test command", readme.contains(command), is(true));
        assertThat(".ci/run runs the README's test command", Docs.lines(Path.of(".ci", "run")).contains(command),
                   is(true));
        assertThat("the wrapper pins a Maven version", Files.readString(
                Path.of(".mvn", "wrapper", "maven-wrapper.properties")).contains("distributionUrl="), is(true));
        assertThat("mvnw is executable", Files.isExecutable(Path.of("mvnw")), is(true));
    }

    @Test
    void nothingPointsAtADocumentOutsideTheRepository() throws IOException {
        List<String> found = new ArrayList<>();
        List<Path> files = new ArrayList<>();
        // Directories not scanned are never entered: the build's own (target/) change while other test forks run.
        Files.walkFileTree(Path.of("."), new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attributes) {
                return NOT_SCANNED.matcher(dir.getFileName().toString()).matches()
                        ? FileVisitResult.SKIP_SUBTREE : FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attributes) {
                if (attributes.isRegularFile() && !file.endsWith("DocConventionsTest.java")) {
                    files.add(file);
                }
                return FileVisitResult.CONTINUE;
            }
        });
        int scanned = 0;
        for (Path file : files) {
            List<String> lines;
            try {
                lines = Files.readAllLines(file, StandardCharsets.UTF_8);
            } catch (CharacterCodingException binary) {
                continue;
            }
            scanned++;
            for (int i = 0; i < lines.size(); i++) {
                Matcher outside = OUTSIDE.matcher(lines.get(i));
                if (outside.find()) {
                    found.add(file.toString().substring(2) + ":" + (i + 1) + ": " + outside.group());
                }
            }
        }
        assertThat("text files scanned", scanned, greaterThan(300));
        assertThat("pointers to documents outside the repository", found, empty());
    }

    @Test
    void theOutsidePointersAreRecognised() {
        // written in two pieces, so that a search of the repository for such pointers does not find these examples
        for (String line : List.of("see DESIGN" + " §8", "as issue" + " 13 asks", "rule of thumb (Part 8 of the notes)",
                                   "../shared/seeds/x.md", "from the design notes")) {
            assertThat(line, OUTSIDE.matcher(line).find(), is(true));
        }
        assertThat(OUTSIDE.matcher("an issuer's 409 in docs/design.md").find(), is(false));
    }

    @Test
    void aCurlBlockWithoutTheMarkerIsCaught() {
        Docs.Block block = new Docs.Block(Path.of("x.md"), 1, "sh", List.of("curl -s localhost:8080/ping"), false);
        assertThat(block.runnable() || block.illustrative() || !block.hasCurl(), is(false));
    }

    private static String problem(Path file, String target) {
        int hash = target.indexOf('#');
        String path = hash < 0 ? target : target.substring(0, hash);
        Path resolved = path.isEmpty() ? file : file.toAbsolutePath().getParent().resolve(path).normalize();
        if (!Files.exists(resolved)) {
            return "no such file";
        }
        if (hash < 0 || !resolved.toString().endsWith(".md")) {
            return null;
        }
        return anchors(resolved).contains(target.substring(hash + 1)) ? null : "no such heading";
    }

    /** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
    private static Set<String> anchors(Path file) {
        Set<String> anchors = new HashSet<>();
        for (String line : Docs.prose(file)) {
            if (!line.startsWith("#")) {
                continue;
            }
            String slug = line.replaceFirst("^#+\\s*", "").toLowerCase(Locale.ROOT)
                    .replaceAll("[^\\p{L}\\p{N} _-]", "").replace(' ', '-');
            String unique = slug;
            for (int n = 1; !anchors.add(unique); n++) {
                unique = slug + "-" + n;
            }
        }
        return anchors;
    }
}
