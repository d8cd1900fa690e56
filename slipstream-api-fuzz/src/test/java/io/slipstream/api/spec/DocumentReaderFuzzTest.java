package io.slipstream.api.spec;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.DictionaryEntries;
import com.code_intelligence.jazzer.junit.FuzzTest;
import io.slipstream.api.codec.Json;
import io.slipstream.api.problem.InvalidInputException;
import io.slipstream.api.problem.Problem;
import java.nio.charset.StandardCharsets;
import java.util.List;
import tools.jackson.databind.node.ObjectNode;

/**
 * The document reader (DocumentParser and SpecReader) over any bytes. Oracle: it either returns documents or throws
 * {@link InvalidInputException} with at least one problem, each with a field path (possibly empty) and a message in
 * words (no parser's class names or features, unless the input holds them); nothing else escapes. What it accepts, written the way the store writes it, reads back
 * the same. Seeds: {@code DocumentReaderFuzzTestInputs/readsAnyBytes/}, the inputs of issue 14 among them.
 */
class DocumentReaderFuzzTest {
    /** What a message in words never holds, unless the input put it there. */
    static final List<String> INTERNALS = List.of("Exception", "tools.jackson", "org.snakeyaml", "Feature", "\tat ");

    @FuzzTest(maxDuration = "9s")
    // Jazzer escapes entries for libFuzzer, but not newlines (which break the dictionary): entries are on one line.
    @DictionaryEntries({"apiVersion: slipstream/v1", "kind: Job", "kind: Quota", "kind: Shape", "kind: Workspace",
            "metadata", "spec", "nodeGroups", "command", "env", "startupProbe", "resources", "storage", "faultTolerance", "retryOn",
            "exitCodes", "errorPatterns", "schedule", "cron", "replicas", "members", "min", "max", "---", "!!str ", "!custom ", "&a ",
            "*a", "<<: ", "? ", "\": ", "{}", "[]", "\\ud800", "1e400",
            "%TAG !! tag:x,2000:"})
    void readsAnyBytes(byte[] input) {
        List<Document<?>> documents;
        try {
            documents = Documents.readAll(input);
        } catch (InvalidInputException e) {
            assertThat(e.problems()).isNotEmpty();
            String text = new String(input, StandardCharsets.ISO_8859_1);
            for (Problem problem : e.problems()) {
                assertThat(problem.message()).isNotBlank();
                for (String internal : INTERNALS) {
                    if (!text.contains(internal)) { // a message may quote the input, whatever it holds
                        assertThat(problem.message()).as("no parser internals in messages").doesNotContain(internal);
                    }
                }
            }
            return;
        }
        assertThat(documents).isNotEmpty();
        for (Document<?> document : documents) {
            ObjectNode stored = SpecWriter.write(document);
            Document<?> again = Documents.readStored(Json.mapper().readTree(Json.mapper().writeValueAsString(stored)));
            assertThat(again).as("what is stored reads back the same").isEqualTo(document);
        }
    }
}
