package com.example.payments.docs;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * The documentation the doc tests read: README.md, every Markdown file under {@code docs/}, and the load tests'
 * README, with their fenced code blocks.
 *
 * <p>The convention for examples: a {@code ```console} block is <em>runnable</em>. Each {@code $ curl ...} line in
 * it is a command, and the lines after it, up to the next {@code $ } line or the end of the block, are its output
 * as shown; {@link DocExamplesIT} runs them in order against the built jar on the development config and compares.
 * A block meant only to illustrate is marked by the line {@value #ILLUSTRATIVE} right before its opening fence
 * (followed by the reason, e.g. {@code <!-- doc-test: illustrative, needs a Redis replica -->}): the doc test
 * skips it. Any other block holding a curl command fails {@link DocConventionsTest}, so an example is either run or
 * visibly marked, never silently stale.
 */
final class Docs {

    /** The marker of an example that is not run; must precede the opening fence on its own line. */
    static final String ILLUSTRATIVE = "<!-- doc-test: illustrative";

    /** One fenced code block. */
    record Block(Path file, int line, String language, List<String> lines, boolean illustrative) {

        boolean runnable() {
            return language.equals("console") && !illustrative;
        }

        boolean hasCurl() {
            return lines.stream().anyMatch(l -> l.startsWith("curl ") || l.startsWith("$ curl "));
        }
    }

    private Docs() {
    }

    /** README.md, docs/**&#47;*.md and load-tests/README.md, in a stable order (README first). */
    static List<Path> files() {
        List<Path> files = new ArrayList<>(List.of(Path.of("README.md")));
        try (Stream<Path> docs = Files.walk(Path.of("docs"))) {
            docs.filter(p -> p.toString().endsWith(".md")).sorted().forEach(files::add);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        files.add(Path.of("load-tests", "README.md"));
        return files;
    }

    static List<String> lines(Path file) {
        try {
            return Files.readAllLines(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Every fenced block of one file ({@code ```lang} to {@code ```}). */
    static List<Block> blocks(Path file) {
        List<String> lines = lines(file);
        List<Block> blocks = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            if (!line.startsWith("```")) {
                continue;
            }
            String language = line.substring(3).trim();
            boolean illustrative = i > 0 && lines.get(i - 1).startsWith(ILLUSTRATIVE);
            int start = i;
            List<String> body = new ArrayList<>();
            for (i++; i < lines.size() && !lines.get(i).startsWith("```"); i++) {
                body.add(lines.get(i));
            }
            blocks.add(new Block(file, start + 1, language, List.copyOf(body), illustrative));
        }
        return blocks;
    }

    /** The text of a file outside its fenced blocks, one entry per line (fenced lines blanked, numbers kept). */
    static List<String> prose(Path file) {
        List<String> lines = new ArrayList<>(lines(file));
        boolean fenced = false;
        for (int i = 0; i < lines.size(); i++) {
            boolean fence = lines.get(i).startsWith("```");
            if (fenced || fence) {
                lines.set(i, "");
            }
            if (fence) {
                fenced = !fenced;
            }
        }
        return lines;
    }
}
