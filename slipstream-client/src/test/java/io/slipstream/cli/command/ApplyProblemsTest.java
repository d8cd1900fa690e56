package io.slipstream.cli.command;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.problem.Problem;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ApplyProblemsTest {
    // a.yaml holds documents 0-2 of the request, b.yaml document 3, c.yaml documents 4-5.
    private static final List<Inputs.Source> SOURCES = List.of(new Inputs.Source("a.yaml", new byte[0]), new Inputs.Source("b.yaml", new byte[0]),
            new Inputs.Source("c.yaml", new byte[0]));
    private static final List<Integer> FIRSTS = List.of(0, 3, 4, 6);

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "documents[0].metadata.name           | a.yaml: documents[0].metadata.name",
            "documents[2].spec.nodeGroups[0].env  | a.yaml: documents[2].spec.nodeGroups[0].env",
            "documents[3].spec.quota              | b.yaml: spec.quota",
            "documents[4].kind                    | c.yaml: documents[0].kind",
            "documents[5]                         | c.yaml: documents[1]",
            "metadata.name                        | metadata.name",
    })
    void problemsNameTheFileAndItsDocument(String field, String expected) {
        assertThat(ApplyCommand.located(new Problem(field, "x"), SOURCES, FIRSTS).field()).isEqualTo(expected);
    }

    @Test
    void aDirectoryIsItsDocumentFilesSortedByName(@TempDir Path dir) throws Exception {
        for (String name : List.of("b.yml", "a.yaml", "c.json", "notes.txt", ".hidden.yaml", "Z.YAML")) {
            Files.writeString(dir.resolve(name), "x");
        }
        Files.createDirectory(dir.resolve("sub.yaml"));
        Files.writeString(dir.resolve("sub.yaml").resolve("d.yaml"), "x");
        String extra = dir.resolve("a.yaml").toString();
        assertThat(Inputs.expand(List.of(dir.toString(), extra))).containsExactly(dir.resolve("Z.YAML").toString(),
                dir.resolve("a.yaml").toString(), dir.resolve("b.yml").toString(), dir.resolve("c.json").toString(), extra);
    }
}
