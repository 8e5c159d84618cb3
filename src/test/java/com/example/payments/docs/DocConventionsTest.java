package com.example.payments.docs;

import java.nio.file.Files;
import java.nio.file.Path;
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
 * ({@link Docs}), illustrative examples stay rare, and the README stays a five-minute read.
 */
class DocConventionsTest {

    private static final Pattern LINK = Pattern.compile("\\[[^\\]]*]\\(([^)\\s]+)\\)");
    private static final Pattern CODE_SPAN = Pattern.compile("`[^`]*`");

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
