package io.slipstream.executor.slurm;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.run.InstanceId;
import io.slipstream.executor.Executor;
import io.slipstream.executor.InstanceReport;
import io.slipstream.executor.LaunchSpec;
import io.slipstream.executor.LogStream;
import io.slipstream.testing.SlurmCluster;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The executor contract again, with every job as an account of its workspace's rather than the server's
 * ({@code slurm.users}, {@code sbatch --uid}): the contract's runs of team-a as one account, its runs without a
 * workspace as the default account, neither of them root. What such a job reads (its command, environment, secrets,
 * metadata, storage) and writes (its logs, exit code, acknowledgement, progress) must still work with the server's
 * files out of its reach. The accounts are made for the class ({@code useradd}) and removed after it.
 */
class SlurmAccountsContractTest extends SlurmExecutorContractTest {
    static final String TEAM_A = "slipstream-ct-a";
    static final String OTHERS = "slipstream-ct-b";

    @BeforeAll
    static void addAccounts() throws Exception {
        for (String user : List.of(TEAM_A, OTHERS)) {
            if (run("id", "-u", user) != 0) {
                assertThat(run("useradd", "--system", "--user-group", "--no-create-home", "--shell", "/usr/sbin/nologin", user)).as("useradd " + user)
                        .isZero();
            }
        }
    }

    @AfterAll
    static void removeAccounts() throws Exception {
        for (String user : List.of(TEAM_A, OTHERS)) {
            run("userdel", user); // its group goes with it (useradd --user-group)
        }
    }

    static int run(String... argv) throws Exception {
        Process process = new ProcessBuilder(argv).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        assertThat(process.waitFor(30, TimeUnit.SECONDS)).as(String.join(" ", argv)).isTrue();
        return process.exitValue();
    }

    /** The jobs' accounts pass through the test's directory (the shared one, the gates) as they would through a shared file system. */
    @BeforeEach
    void openTheTestsDirectory() throws Exception {
        Files.setPosixFilePermissions(dataDir, PosixFilePermissions.fromString("rwxr-xr-x"));
    }

    /**
     * A job of team-a's account, hostile: it cannot enter another account's instance directory (its environment, its
     * work), write that instance's exit code, cancel its job, write the leader fence, or put anything in its own
     * directory beside the server's files (the handle it cannot read either). The other job runs on, as its account.
     */
    @Test
    void aJobCannotReachAnotherAccountsFilesOrJobNorTheServersFiles() throws Exception {
        Executor executor = newExecutor();
        InstanceId victim = newInstanceId();
        Map<String, String> victimHandle = launch(executor, spec(victim, nodeName(), "id -u; echo private > \"$HOME/mine\"; echo started; sleep 600"));
        awaitOutput(executor, victim, victimHandle, "started");
        InstanceId attacker = newInstanceId();
        Path shared = dataDir.resolve("shared");
        Path victimDir = shared.resolve("instances").resolve(victimHandle.get(SlurmHandles.DIR));
        Path ownDir = shared.resolve("instances").resolve(SlurmHandles.launch(attacker, nodeName(), 0, 0, null).get(SlurmHandles.DIR));
        String script = """
                id -u
                cat "$V/env" > /dev/null 2>&1 && echo read-env || echo no-env
                cat "$V/work/mine" 2> /dev/null || echo no-work
                ( echo 0 > "$V/report/exit_code" ) 2> /dev/null && echo wrote-exit || echo no-exit
                ( echo 99 > "$SHARED/.fence" ) 2> /dev/null && echo wrote-fence || echo no-fence
                ( echo x > "$OWN/planted" ) 2> /dev/null && echo planted || echo no-plant
                cat "$OWN/slurm_handle" > /dev/null 2>&1 && echo read-handle || echo no-handle
                if scancel --signal=KILL "$JOB" > "$HOME/scancel.out" 2>&1; then echo cancelled
                elif grep -q -i permission "$HOME/scancel.out"; then echo no-cancel; else cat "$HOME/scancel.out"; fi
                echo done
                """;
        Map<String, String> env = Map.of("V", victimDir.toString(), "SHARED", shared.toString(), "OWN", ownDir.toString(), "JOB",
                victimHandle.get(SlurmHandles.JOB), "SLURM_CONF", CLUSTER.conf().toString(), "PATH", System.getenv("PATH"));
        Map<String, String> handle = launch(executor, new LaunchSpec(attacker, "main-0", nodeName(), List.of(), List.of("sh", "-c", script), env,
                null, null, metadata(attacker, "attack", 1), null));
        assertThat(awaitReport(attacker, InstanceReport.Exited.class).exitCode()).isZero();
        String out = readAll(executor, attacker, handle, LogStream.STDOUT);
        assertThat(out.lines().toList()).containsExactly(Integer.toString(uidOf(TEAM_A)), "no-env", "no-work", "no-exit", "no-fence", "no-plant",
                "no-handle", "no-cancel", "done");
        assertThat(readAll(executor, victim, victimHandle, LogStream.STDOUT)).startsWith(uidOf(OTHERS) + "\n");
        assertThat(CLUSTER.slurm("squeue", "--noheader", "--format=%T", "--jobs=" + victimHandle.get(SlurmHandles.JOB)).trim()).isEqualTo("RUNNING");
    }

    /**
     * A launch of another account's instance that failed at sbatch (more memory than its node has) leaves its launch
     * record; a job of team-a's account, named as that instance's job, is then never taken for its launch (neither by
     * {@code find}, which the control plane asks after a failed launch, nor by the launch again): it is not that account's.
     */
    @Test
    void aJobOfAnotherAccountNamedAsAnInstancesJobIsNeverTakenForIt() throws Exception {
        Executor executor = newExecutor();
        InstanceId victim = newInstanceId();
        LaunchSpec tooLarge = new LaunchSpec(victim, "main-0", nodeName(), List.of(), List.of("sh", "-c", "sleep 600"), Map.of(), null, null, null,
                null, new io.slipstream.api.spec.Resources(1000, 1L << 40, 0, null));
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> executor.launch(tooLarge)).isInstanceOf(io.slipstream.executor.ExecutorException.class);
        String name = JobName.of(settings(dataDir).jobNamePrefix(), victim, 0).toString();
        try {
            String impostor = impostor(executor, "sbatch --parsable --hold --job-name=\"$NAME\" --partition=" + SlurmCluster.PARTITION
                    + " --output=/dev/null --chdir=/tmp --wrap='sleep 600'", Map.of("NAME", name));
            assertThat(executor.find(victim)).as("the impostor " + impostor + " is not the instance's launch").isEmpty();
            Map<String, String> relaunched = launch(executor, spec(victim, nodeName(), "id -u; sleep 600"));
            assertThat(relaunched.get(SlurmHandles.JOB)).isNotEqualTo(impostor);
        } finally {
            CLUSTER.slurm("scancel", "--name=" + name);
        }
    }

    /**
     * A job of team-a's account whose name holds a line of squeue's output (a newline, then another instance's job id,
     * COMPLETED and that job's name) makes the server take that other instance for ended: it is reported running on.
     */
    @Test
    void aJobNameThatForgesALineOfTheQueueChangesNoOtherJobsState() throws Exception {
        Executor executor = newExecutor();
        java.util.concurrent.LinkedBlockingQueue<InstanceReport> seen = new java.util.concurrent.LinkedBlockingQueue<>();
        executor.setListener(seen::add);
        InstanceId victim = newInstanceId();
        Map<String, String> victimHandle = launch(executor, spec(victim, nodeName(), "echo started; sleep 600"));
        awaitOutput(executor, victim, victimHandle, "started");
        String job = victimHandle.get(SlurmHandles.JOB);
        String forged = "x\n" + job + "|COMPLETED|None|" + JobName.of(settings(dataDir).jobNamePrefix(), victim, 0);
        try {
            // Running and held, so that a forged line comes after the real one whatever squeue's order.
            impostor(executor, "sbatch --parsable --job-name=\"$NAME\" --partition=" + SlurmCluster.PARTITION + " --output=/dev/null --chdir=/tmp"
                    + " --wrap='sleep 600' && sbatch --parsable --hold --job-name=\"$NAME\" --partition=" + SlurmCluster.PARTITION
                    + " --output=/dev/null --chdir=/tmp --wrap='sleep 600'", Map.of("NAME", forged));
            String queue = CLUSTER.slurm("squeue", "--noheader", "--states=all", "--format=" + JobState.SQUEUE_FORMAT);
            assertThat(queue).as("the forged line is in squeue's output").contains("\n" + job + "|COMPLETED|");
            InstanceReport report = null;
            for (long deadline = System.nanoTime() + 3_000_000_000L; report == null && System.nanoTime() < deadline; ) {
                report = seen.poll(100, TimeUnit.MILLISECONDS);
                if (report != null && (!report.id().equals(victim) || report instanceof InstanceReport.Running)) {
                    report = null;
                }
            }
            assertThat(report).as("a report of the victim's end while its job runs").isNull();
            assertThat(CLUSTER.slurm("squeue", "--noheader", "--format=%T", "--jobs=" + job).trim()).isEqualTo("RUNNING");
        } finally {
            CLUSTER.slurm("scancel", "--partition=" + SlurmCluster.PARTITION, "--user=" + TEAM_A);
        }
    }

    /**
     * A directory of the shared one that is an account's (a trusted-tenants setup, whose jobs all ran as the server's
     * service account, leaves its instances/ so) may hold a link its jobs planted: the server refuses to start before it
     * makes, changes or empties anything there, and so follows none.
     */
    @Test
    void theServerRefusesASharedDirectoryWhoseDirectoriesAreAnAccountsBeforeItFollowsALinkInThem() throws Exception {
        Path shared = dataDir.resolve("shared-of-an-account");
        Path instances = Files.createDirectories(shared.resolve("instances"));
        Files.setAttribute(instances, "unix:uid", uidOf(TEAM_A));
        Path elsewhere = Files.createDirectories(dataDir.resolve("elsewhere"));
        Files.writeString(elsewhere.resolve("kept"), "x");
        Files.setPosixFilePermissions(elsewhere, PosixFilePermissions.fromString("rwxr-xr-x"));
        Files.createSymbolicLink(instances.resolve(".pins"), elsewhere);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> new SlurmExecutor(settings(shared), dataDir.resolve("state-of-an-account"),
                java.time.Clock.systemUTC()).close()).isInstanceOf(io.slipstream.executor.ExecutorException.class).hasMessageContaining(instances.toString());
        assertThat(elsewhere.resolve("kept")).as("a file where the planted link leads").exists();
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(elsewhere))).isEqualTo("rwxr-xr-x");
    }

    /**
     * A job passes through the instances' and storage roots to its own directories, and lists neither: the names there are
     * every run's and every workspace's (which squeue does not show where slurm.conf has PrivateData=jobs).
     */
    @Test
    void aJobCannotListTheRunsOrWorkspacesOfTheSharedDirectory() throws Exception {
        Executor executor = newExecutor();
        Path shared = dataDir.resolve("shared");
        InstanceId other = newInstanceId();
        launch(executor, spec(other, nodeName(), "true"));
        awaitReport(other, InstanceReport.Exited.class);
        InstanceId id = newInstanceId();
        String script = """
                ls "$SHARED/instances" > /dev/null 2>&1 && echo listed-runs || echo no-runs
                ls "$SHARED/storage" > /dev/null 2>&1 && echo listed-workspaces || echo no-workspaces
                test -d "$SLIPSTREAM_STORAGE_OUT" && echo own-storage
                """;
        Map<String, String> handle = launch(executor, new LaunchSpec(id, "main-0", nodeName(), List.of(), List.of("sh", "-c", script),
                Map.of("SHARED", shared.toString()), null, null, metadata(id, "lister", 1), null));
        assertThat(awaitReport(id, InstanceReport.Exited.class).exitCode()).isZero();
        assertThat(readAll(executor, id, handle, LogStream.STDOUT).lines().toList()).containsExactly("no-runs", "no-workspaces", "own-storage");
    }

    /** Runs {@code script} as a job of team-a's account (an instance of its own) and returns the last line it printed. */
    private String impostor(Executor executor, String script, Map<String, String> variables) throws Exception {
        InstanceId attacker = newInstanceId();
        Map<String, String> env = new java.util.HashMap<>(variables);
        env.put("SLURM_CONF", CLUSTER.conf().toString());
        env.put("PATH", System.getenv("PATH"));
        Map<String, String> handle = launch(executor, new LaunchSpec(attacker, "main-0", nodeName(), List.of(), List.of("sh", "-c", script + " && echo done"),
                env, null, null, metadata(attacker, "attack", 1), null));
        long deadline = System.nanoTime() + 30_000_000_000L;
        String out = "";
        while (System.nanoTime() < deadline && !out.endsWith("done\n")) {
            out = readAll(executor, attacker, handle, LogStream.STDOUT);
            TimeUnit.MILLISECONDS.sleep(50);
        }
        assertThat(out).as("what the impostor's sbatch printed; stderr: " + readAll(executor, attacker, handle, LogStream.STDERR)).matches("(?s)(\\d+\\n)+done\\n");
        List<String> lines = out.lines().toList();
        return lines.get(lines.size() - 2);
    }

    private static int uidOf(String user) {
        int[] ids = SlurmAccounts.lookUp(user, java.time.Duration.ofSeconds(10));
        assertThat(ids).as(user).isNotNull();
        return ids[0];
    }

    @Override
    SlurmSettings settings(Path shared) {
        return super.settings(shared).withUsers(Map.of("team-a", TEAM_A)).withDefaultUser(OTHERS).withAllowRootJobs(false);
    }
}
