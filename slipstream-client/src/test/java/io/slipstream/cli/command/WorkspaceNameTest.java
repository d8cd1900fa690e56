package io.slipstream.cli.command;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.slipstream.cli.CliException;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class WorkspaceNameTest {
    @ParameterizedTest(name = "{0} --workspace {1}")
    @CsvSource(delimiter = '|', nullValues = "-", value = {
            "team-a/train | -      | team-a | train",
            "train        | team-a | team-a | train",
            "team-a/train | team-a | team-a | train", // both, agreeing
    })
    void parses(String text, String workspace, String expectedWorkspace, String expectedName) {
        assertThat(WorkspaceName.parse("job", text, workspace)).isEqualTo(new WorkspaceName(expectedWorkspace, expectedName));
    }

    @ParameterizedTest(name = "{0} --workspace {1}")
    @CsvSource(delimiter = '|', nullValues = "-", value = {
            "train          | -      | name the workspace of the job 'train': WORKSPACE/NAME, or NAME --workspace WORKSPACE",
            "team-a/train   | team-b | job team-a/train names workspace team-a but --workspace is team-b",
            "/train         | -      | must be WORKSPACE/NAME (one '/')",
            "team-a/        | -      | must be WORKSPACE/NAME (one '/')",
            "team-a/x/train | -      | must be WORKSPACE/NAME (one '/')",
            "''             | team-a | name the job",
            "train          | ' '    | --workspace is empty",
    })
    void refuses(String text, String workspace, String message) {
        assertThatThrownBy(() -> WorkspaceName.parse("job", text, workspace)).isInstanceOf(CliException.class).hasMessageContaining(message);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {"team a/my job | jobs | /api/v1/workspaces/team%20a/jobs/my%20job"})
    void pathsAreEncoded(String text, String kinds, String path) {
        assertThat(WorkspaceName.parse("job", text, null).path(kinds)).isEqualTo(path);
    }
}
