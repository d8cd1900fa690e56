package io.slipstream.executor.local.process;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.slipstream.executor.local.files.InstanceDirectory;
import io.slipstream.executor.local.uid.Isolation;
import io.slipstream.executor.local.uid.UidRangeClaims;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The launcher binary against the shell chain it replaces: the same environment reaches the command from the same file,
 * the same exit codes come back; and what the binary refuses. The executor's whole contract runs through both (the
 * ShellLaunched* tests).
 */
class SupervisorProgramTest {
    @TempDir
    Path root;

    /** Values the environment file must carry unchanged: quotes, newlines, '=', shell syntax, non-ASCII, empty. */
    private static final Map<String, String> TRICKY = new LinkedHashMap<>();

    static {
        TRICKY.put("PLAIN", "value");
        TRICKY.put("QUOTES", "it's 'quoted' ''");
        TRICKY.put("LINES", "one\ntwo\n\nthree\n");
        TRICKY.put("EQUALS", "=a=b=");
        TRICKY.put("SHELL", "$HOME `id` $(id) \\ ; | & > *");
        TRICKY.put("EMPTY", "");
        TRICKY.put("UNICODE", "héllo wörld ✓");
        TRICKY.put("_under_9", "x");
        TRICKY.put("PATH", "/usr/bin:/bin");
    }

    /**
     * The shell chain says "started" only once the instance's first process is in its cgroup (or failed to join it):
     * a closing server keeps only the cgroups of instances it knows started, and a stop through the cgroup must not miss
     * the first process. Here the cgroup's {@code cgroup.procs} is a FIFO nobody reads yet, so joining it waits; the
     * supervisor said "started" at once before the handshake, and now says nothing until the join is done.
     */
    /** A first process that cannot join its cgroup ends (exit code 2) and the shell chain goes on: no wait for it. */
    @Test
    void theShellChainRecordsAFirstProcessThatCouldNotJoinItsCgroup() throws Exception {
        Path control = root.resolve("control");
        Process supervisor = shellChain(control, root.resolve("gone").resolve("cgroup.procs"));
        try {
            assertThat(new String(supervisor.getInputStream().readAllBytes(), StandardCharsets.UTF_8)).isEqualTo("started\n");
            assertThat(supervisor.waitFor(30, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
            assertThat(Files.readString(control.resolve("exit_code")).strip()).isEqualTo("2");
            assertThat(control.resolve("joined")).doesNotExist();
        } finally {
            supervisor.destroyForcibly();
        }
    }

    @Test
    void theShellChainSaysStartedOnlyOnceTheFirstProcessIsInItsCgroup() throws Exception {
        Path control = root.resolve("control");
        Path procs = root.resolve("cgroup.procs");
        assertThat(new ProcessBuilder("mkfifo", procs.toString()).start().waitFor()).isZero();
        Process supervisor = shellChain(control, procs);
        try {
            java.util.concurrent.CompletableFuture<String> said = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
                try {
                    return new java.io.BufferedReader(new java.io.InputStreamReader(supervisor.getInputStream(), StandardCharsets.UTF_8)).readLine();
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            // Not a wait for something to happen: before the handshake "started" came within milliseconds.
            assertThatThrownBy(() -> said.get(1, java.util.concurrent.TimeUnit.SECONDS)).as("started before joining its cgroup")
                    .isInstanceOf(java.util.concurrent.TimeoutException.class);
            assertThat(Files.readString(procs)).as("what the first process wrote to join").isEqualTo("0\n");
            assertThat(said.get(30, java.util.concurrent.TimeUnit.SECONDS)).isEqualTo("started");
            assertThat(supervisor.waitFor(30, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
            assertThat(Files.readString(control.resolve("exit_code")).strip()).isEqualTo("0");
            assertThat(control.resolve("joined")).as("the FIFO of the handshake, removed").doesNotExist();
        } finally {
            supervisor.descendants().forEach(ProcessHandle::destroyForcibly); // a first process still waiting to join
            supervisor.destroyForcibly();
        }
    }

    /** The shell chain's supervisor of {@code true} for an instance whose cgroup's {@code cgroup.procs} is {@code procs}. */
    private Process shellChain(Path control, Path procs) throws IOException {
        Files.createDirectory(control);
        Path work = Files.createDirectory(root.resolve("work"));
        Files.writeString(control.resolve("env"), "");
        List<String> argv = Supervisor.argv(SupervisorProgram.shell(), control, work, null, null, 0, null, null, null, List.of(procs),
                DeviceCover.NONE, List.of("true"));
        ProcessBuilder builder = new ProcessBuilder(argv).directory(control.toFile()).redirectError(control.resolve("supervisor.log").toFile());
        builder.environment().clear();
        builder.environment().putAll(Supervisor.ENVIRONMENT);
        return builder.start();
    }

    @Test
    void theBuildWithACompilerStartsInstancesThroughTheBinary() {
        assumeTrue(Boolean.getBoolean("launcher.built"), "this build makes no launcher binary (no C compiler, or -P '!launcher')");
        assertThat(SupervisorProgram.binaryInBuild()).as("the launcher binary in the build").isTrue();
        SupervisorProgram program = SupervisorProgram.of(SupervisorProgram.Mode.auto, root);
        assertThat(program.isBinary()).isTrue();
        assertThat(program.command()).singleElement().asString().startsWith(root.resolve(".launcher/slipstream-launch-").toString());
        assertThat(SupervisorProgram.of(SupervisorProgram.Mode.binary, root).command()).as("the same build: the same binary").isEqualTo(program.command());
    }

    @Test
    void binaryModeRefusesToStartWhenTheBinaryCannotBeInstalled() throws IOException {
        Files.writeString(root.resolve(".launcher"), "not a directory");
        assertThatThrownBy(() -> SupervisorProgram.of(SupervisorProgram.Mode.binary, root)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("instances.launcher is binary");
        assertThat(SupervisorProgram.of(SupervisorProgram.Mode.auto, root).isBinary()).isFalse();
    }

    @ParameterizedTest
    @EnumSource(value = SupervisorProgram.Mode.class, names = {"auto", "shell"})
    void theCommandGetsTheEnvironmentFileExactlyAndItsExitCode(SupervisorProgram.Mode mode) throws Exception {
        SupervisorProgram program = program(mode);
        InstanceDirectory dir = instance("env");
        dir.writeEnvironment(TRICKY);
        Run run = run(program, dir, null, null, "--clear-groups", "sh", "-c", "env -0; exit 7");
        assertThat(run.exitCode()).isEqualTo(7);
        Map<String, String> seen = new LinkedHashMap<>();
        for (String entry : run.stdout().split("\0")) {
            int equals = entry.indexOf('=');
            seen.put(entry.substring(0, equals), entry.substring(equals + 1));
        }
        assertThat(seen).containsAllEntriesOf(TRICKY).doesNotContainKeys("ENTER", "INIT").containsEntry("PWD", dir.sandbox().toString());
    }

    @ParameterizedTest
    @EnumSource(value = SupervisorProgram.Mode.class, names = {"auto", "shell"})
    void aCommandThatIsNotThereExits127AndOneKilledExitsWith128PlusItsSignal(SupervisorProgram.Mode mode) throws Exception {
        SupervisorProgram program = program(mode);
        InstanceDirectory missing = instance("missing");
        missing.writeEnvironment(Map.of());
        assertThat(run(program, missing, null, null, "--clear-groups", "no-such-command-anywhere").exitCode()).isEqualTo(127);
        InstanceDirectory killed = instance("killed");
        killed.writeEnvironment(Map.of());
        assertThat(run(program, killed, null, null, "--clear-groups", "sh", "-c", "kill -TERM $$").exitCode()).isEqualTo(143);
    }

    /** The server writes the file; anything else in it is refused before the command runs, and said in its stderr. */
    @ParameterizedTest
    @CsvSource(delimiter = '|', textBlock = """
            export A=b                  | is not NAME='value'
            A='b'                       | does not start with export
            export A='b                 | unterminated value
            export 1A='b'               | is not NAME='value'
            export A='b'x'              | is not quoted as expected
            """)
    void theBinaryRefusesAnEnvironmentFileTheServerDoesNotWrite(String line, String problem) throws Exception {
        SupervisorProgram program = program(SupervisorProgram.Mode.auto);
        InstanceDirectory dir = instance("bad");
        Files.writeString(dir.environmentFile(), line.strip() + "\n");
        Run run = run(program, dir, null, null, "--clear-groups", "sh", "-c", "echo RAN");
        assertThat(run.exitCode()).isEqualTo(2);
        assertThat(run.stdout()).doesNotContain("RAN");
        assertThat(run.stderr()).contains(problem);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', textBlock = """
            0      | --clear-groups | may not be 0
            x1     | --clear-groups | the uid is not a number
            -5     | --clear-groups | the uid is not a number
            """)
    void theBinaryRefusesAUidItMustNotTake(String uid, String groups, String problem) throws Exception {
        SupervisorProgram program = program(SupervisorProgram.Mode.auto);
        InstanceDirectory dir = instance("uid");
        dir.writeEnvironment(Map.of());
        ProcessBuilder builder = new ProcessBuilder(argv(program, dir, dir.sandbox(), uid, groups, "touch", dir.path().resolve("ran").toString()))
                .directory(dir.path().toFile()).redirectErrorStream(true);
        builder.environment().clear();
        builder.environment().putAll(Supervisor.ENVIRONMENT);
        Process process = builder.start();
        String said = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor()).isEqualTo(2);
        assertThat(said).contains(problem);
        assertThat(dir.path().resolve("ran")).doesNotExist();
        assertThat(dir.path().resolve("pid")).doesNotExist();
    }

    @Test
    void aGroupOptionOtherThanTheTwoTheServerWritesIsRefusedBeforeTheCommandRuns() throws Exception {
        assumeTrue(Isolation.runningAsRoot(), "switching users needs root");
        SupervisorProgram program = program(SupervisorProgram.Mode.auto);
        Files.setPosixFilePermissions(root, PosixFilePermissions.fromString("rwx--x--x"));
        Isolation isolation = UidRangeClaims.claim(Path.of(UidRangeClaims.DEFAULT_DIRECTORY), root, null);
        InstanceDirectory dir = instance("groups");
        Path wd = dir.create(isolation.firstUid(), null);
        dir.writeEnvironment(Map.of());
        Run run = run(program, dir, wd, isolation.firstUid(), "--groups=0,1", "sh", "-c", "echo RAN");
        assertThat(run.exitCode()).isEqualTo(2);
        assertThat(run.stdout()).doesNotContain("RAN");
        assertThat(run.stderr()).contains("is not a number");
    }

    /**
     * Through the namespace's init, as the run's uid: a script without {@code #!} runs with /bin/sh, as the shell's exec
     * runs it; a command that is not there exits 127, a file that may not be run 126, with what went wrong in stderr.
     */
    @ParameterizedTest
    @EnumSource(value = SupervisorProgram.Mode.class, names = {"auto", "shell"})
    void theInitStartsWhatTheShellWouldAndFailsTheWayItFails(SupervisorProgram.Mode mode) throws Exception {
        assumeTrue(Isolation.runningAsRoot(), "switching users needs root");
        SupervisorProgram program = program(mode);
        Files.setPosixFilePermissions(root, PosixFilePermissions.fromString("rwx--x--x"));
        Isolation isolation = UidRangeClaims.claim(Path.of(UidRangeClaims.DEFAULT_DIRECTORY), root, null);
        int uid = isolation.firstUid();

        InstanceDirectory script = instance("script");
        Path wd = script.create(uid, null);
        script.writeEnvironment(Map.of("GREETING", "hello"));
        Path file = Files.writeString(wd.resolve("no-shebang"), "echo \"$GREETING from $(id -u)\"\nexit 3\n");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwxr-xr-x"));
        Run ran = run(program, script, wd, uid, "--clear-groups", "./no-shebang");
        assertThat(ran.exitCode()).as(ran.stderr()).isEqualTo(3);
        assertThat(ran.stdout()).isEqualTo("hello from " + uid + "\n");

        InstanceDirectory missing = instance("missing-as-uid");
        Path missingWd = missing.create(uid, null);
        missing.writeEnvironment(Map.of());
        Run notThere = run(program, missing, missingWd, uid, "--clear-groups", "no-such-command-anywhere");
        assertThat(notThere.exitCode()).as(notThere.stderr()).isEqualTo(127);
        assertThat(notThere.stderr()).contains("no-such-command-anywhere");

        InstanceDirectory denied = instance("denied");
        Path deniedWd = denied.create(uid, null);
        denied.writeEnvironment(Map.of());
        Files.setPosixFilePermissions(Files.writeString(deniedWd.resolve("not-executable"), "echo RAN\n"), PosixFilePermissions.fromString("rw-r--r--"));
        Run refused = run(program, denied, deniedWd, uid, "--clear-groups", "./not-executable");
        assertThat(refused.exitCode()).isEqualTo(126);
        assertThat(refused.stdout()).doesNotContain("RAN");
    }

    private SupervisorProgram program(SupervisorProgram.Mode mode) {
        if (mode != SupervisorProgram.Mode.shell) {
            assumeTrue(SupervisorProgram.binaryInBuild(), "this build has no launcher binary");
        }
        SupervisorProgram program = SupervisorProgram.of(mode, root);
        assertThat(program.isBinary()).isEqualTo(mode != SupervisorProgram.Mode.shell);
        return program;
    }

    private InstanceDirectory instance(String name) throws IOException {
        Path path = Files.createDirectories(root.resolve("instances").resolve(name));
        Files.createDirectories(path.resolve("work"));
        return new InstanceDirectory(path);
    }

    private record Run(int exitCode, String stdout, String stderr) {
    }

    private static Run run(SupervisorProgram program, InstanceDirectory dir, Path wd, Object uid, String groups, String... command) throws Exception {
        ProcessBuilder builder = new ProcessBuilder(argv(program, dir, wd == null ? dir.sandbox() : wd, uid == null ? "" : uid.toString(), groups,
                command)).directory(dir.path().toFile())
                .redirectError(ProcessBuilder.Redirect.appendTo(dir.supervisorLog().toFile()));
        builder.environment().clear();
        builder.environment().putAll(Supervisor.ENVIRONMENT);
        Process supervisor = builder.start();
        String said = new String(supervisor.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        int exitCode = supervisor.waitFor();
        String log = Files.readString(dir.supervisorLog());
        assertThat(said).as("the supervisor's stdout; its log: %s", log).isEqualTo("started\n");
        assertThat(exitCode).as("the supervisor's own exit code; its log: %s", log).isZero();
        return new Run(Integer.parseInt(Files.readString(dir.path().resolve("exit_code")).strip()),
                Files.readString(dir.logs().of(io.slipstream.executor.LogStream.STDOUT)), Files.readString(dir.logs().of(io.slipstream.executor.LogStream.STDERR)));
    }

    /** The supervisor's command line, as {@link Supervisor#argv} makes it, with a uid as text (the binary must refuse some). */
    private static List<String> argv(SupervisorProgram program, InstanceDirectory dir, Path wd, String uid, String groups, String... command) {
        List<String> argv = new ArrayList<>(program.command());
        argv.addAll(List.of(dir.path().toString(), wd.toString(), uid, groups, "4096", "", "", "", "", ""));
        argv.addAll(List.of(command));
        return argv;
    }
}
