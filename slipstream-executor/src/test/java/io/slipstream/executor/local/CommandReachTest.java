package io.slipstream.executor.local;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CommandReachTest {
    private static final int RUN_UID = 64_123;

    @TempDir
    Path dir;

    private Path tool(String home, String permissions) throws Exception {
        Path bin = Files.createDirectories(dir.resolve(home).resolve("bin"));
        Files.setPosixFilePermissions(dir.resolve(home), PosixFilePermissions.fromString(permissions));
        Path tool = Files.writeString(bin.resolve("train"), "#!/bin/sh\n");
        Files.setPosixFilePermissions(tool, PosixFilePermissions.fromString("rwxr-xr-x"));
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
        return bin;
    }

    @Test
    void aCommandOnlyInADirectoryTheRunsUidCannotEnterIsNamedWithThatDirectory() throws Exception {
        Path privateBin = tool("root-home", "rwx------");
        assertThat(CommandReach.problem("train", privateBin + ":/usr/bin", RUN_UID)).hasValueSatisfying(problem -> assertThat(problem)
                .contains("command 'train' is found on the PATH only as " + privateBin.resolve("train"))
                .contains(dir.resolve("root-home") + " is rwx------").contains("uid " + RUN_UID));
    }

    @Test
    void aReachableCopyLaterOnThePathIsWhatTheLookupFinds() throws Exception {
        Path privateBin = tool("root-home", "rwx------");
        Path shared = tool("opt", "rwxr-xr-x");
        assertThat(CommandReach.problem("train", privateBin + ":" + shared, RUN_UID)).isEmpty();
    }

    @Test
    void whatIsNotOnThePathOrNamesAFileIsLeftToTheProcess() throws Exception {
        Path privateBin = tool("root-home", "rwx------");
        assertThat(CommandReach.problem("nope", privateBin.toString(), RUN_UID)).isEmpty();
        assertThat(CommandReach.problem(privateBin.resolve("train").toString(), "/usr/bin", RUN_UID)).isEmpty();
        assertThat(CommandReach.problem("sh", "/usr/bin:/bin", RUN_UID)).isEmpty();
    }

    @Test
    void aDirectoryItsGroupMayEnterCountsAsReachable() throws Exception {
        Path groupBin = tool("team", "rwxr-x---");
        assertThat(CommandReach.problem("train", groupBin.toString(), RUN_UID)).as("never refuse what might work").isEmpty();
    }
}
