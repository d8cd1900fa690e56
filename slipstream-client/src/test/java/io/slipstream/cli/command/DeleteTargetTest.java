package io.slipstream.cli.command;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.slipstream.api.codec.DocumentParser;
import io.slipstream.cli.CliException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class DeleteTargetTest {
    private static List<String> targets(String arguments, String workspace) {
        return DeleteTarget.fromArguments(Arrays.asList(arguments.split(" ")), workspace).stream().map(DeleteTarget::path).toList();
    }

    @ParameterizedTest(name = "delete {0} --workspace {1}")
    @CsvSource(delimiter = '|', nullValues = "-", value = {
            "job team-a/train                      | -      | /api/v1/workspaces/team-a/jobs/train",
            "jobs team-a/train team-b/eval         | -      | /api/v1/workspaces/team-a/jobs/train /api/v1/workspaces/team-b/jobs/eval",
            "job train                             | team-a | /api/v1/workspaces/team-a/jobs/train",
            "quota team-a/gpus                     | -      | /api/v1/workspaces/team-a/quotas/gpus",
            "secret team-a/hf                      | -      | /api/v1/workspaces/team-a/secrets/hf",
            "Secret hf                             | team-a | /api/v1/workspaces/team-a/secrets/hf",
            "workspace team-a                      | -      | /api/v1/workspaces/team-a",
            "ws team-a                             | -      | /api/v1/workspaces/team-a",
            "shape a100                            | -      | /api/v1/shapes/a100",
            "job/team-a/train quota/team-a/gpus    | -      | /api/v1/workspaces/team-a/jobs/train /api/v1/workspaces/team-a/quotas/gpus",
            "workspace/team-a shape/a100           | -      | /api/v1/workspaces/team-a /api/v1/shapes/a100",
            "job/train                             | team-a | /api/v1/workspaces/team-a/jobs/train",
    })
    void fromArguments(String arguments, String workspace, String paths) {
        assertThat(targets(arguments, workspace)).containsExactly(paths.split(" "));
    }

    @ParameterizedTest(name = "delete {0}")
    @CsvSource(delimiter = '|', nullValues = "-", value = {
            "frob x                | -      | unknown type 'frob'",
            "frob/x                | -      | unknown type 'frob'",
            "job                   | -      | name the job to delete: delete job WORKSPACE/NAME",
            "job train             | -      | name the workspace of the job 'train'",
            "job/team-a/train x    | -      | give every object as TYPE/NAME",
            "workspace a/b         | -      | a workspace has a plain NAME",
            "job team-a/train      | team-b | names workspace team-a but --workspace is team-b",
            "run/train-1           | -      | unknown type 'run'",
    })
    void refuses(String arguments, String workspace, String message) {
        assertThatThrownBy(() -> targets(arguments, workspace)).isInstanceOf(CliException.class).hasMessageContaining(message);
    }

    @Test
    void documentsAreDeletedLastFirst() {
        var documents = DocumentParser.parse("""
                apiVersion: slipstream/v1
                kind: Workspace
                metadata: {name: team-a}
                ---
                apiVersion: slipstream/v1
                kind: Quota
                metadata: {name: gpus, workspace: team-a}
                ---
                apiVersion: slipstream/v1
                kind: Job
                metadata: {name: train, workspace: team-a}
                """.getBytes(StandardCharsets.UTF_8));
        assertThat(DeleteTarget.fromDocuments("f.yaml", documents)).extracting(DeleteTarget::toString)
                .containsExactly("job team-a/train", "quota team-a/gpus", "workspace team-a");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "'{\"kind\": \"Frob\", \"metadata\": {\"name\": \"x\"}}'          | f.yaml: kind 'Frob' cannot be deleted",
            "'{\"kind\": \"Job\", \"metadata\": {\"name\": \"x\"}}'           | f.yaml: metadata.name and metadata.workspace are needed to delete a Job",
            "'{\"kind\": \"Shape\", \"metadata\": {}}'                        | f.yaml: metadata.name is needed to delete a Shape",
    })
    void documentsThatNameNothingAreRefused(String document, String message) {
        var documents = DocumentParser.parse(document.getBytes(StandardCharsets.UTF_8));
        assertThatThrownBy(() -> DeleteTarget.fromDocuments("f.yaml", documents)).isInstanceOf(CliException.class).hasMessageContaining(message);
    }
}
