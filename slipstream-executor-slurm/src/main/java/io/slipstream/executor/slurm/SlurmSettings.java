package io.slipstream.executor.slurm;

import static java.util.Objects.requireNonNull;

import io.slipstream.executor.ExecutorSettings;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The Slurm executor's settings, its {@code slurm:} block (docs/slurm.md).
 *
 * @param partition       the partition reserved for Slipstream: its nodes are the nodes instances are placed on, and every
 *                        job is submitted to it
 * @param qos             the QOS of every job ({@code null}: the partition's or the account's default)
 * @param account         the Slurm account every job is charged to ({@code null}: the service account's default)
 * @param sharedDirectory a directory every node of the partition sees at this same path (the cluster's shared file
 *                        system): instances' directories, logs and storage live there
 * @param slurmConf       the {@code slurm.conf} the Slurm commands read ({@code SLURM_CONF}; {@code null}: Slurm's own
 *                        default, or the server's {@code SLURM_CONF})
 * @param commands        the directory of {@code sbatch}, {@code squeue}, {@code scancel}, {@code sinfo} and
 *                        {@code scontrol} ({@code null}: found on the server's {@code PATH})
 * @param commandTimeout  how long one Slurm command may take before it is given up (a controller that does not answer)
 * @param pollInterval    how often the jobs' states are asked ({@code squeue}, once for all of them)
 * @param nodeRefresh     how often the partition's nodes are read again ({@code sinfo})
 * @param startTimeout    how long a job may stay pending before it is cancelled and its instance reported lost
 * @param firstPort       the first port given to instances on nodes other than this machine
 * @param lastPort        the last such port
 * @param gpuModel        the model of GPUs whose GRES names no type ({@code gpu:4} rather than {@code gpu:a100:4})
 * @param jobNamePrefix   the first part of every job's name: two installations that share a Slurm cluster need different ones
 * @param inheritEnv      names of the server's environment variables that instances see (as the local executor's)
 * @param trustedTenants  that every user of the server trusts the others: the executor starts only then, since every run
 *                        shares one Unix account on the nodes ({@link #startRefusal}, docs/slurm.md "Limits")
 * @param allowRootJobs   that tenant code may run as root on the nodes (the server runs as root): only for a trial on one
 *                        machine
 * @param users           the Unix account each workspace's jobs run as ({@code sbatch --uid}, the server running as root):
 *                        one account per workspace keeps workspaces apart ({@link SlurmAccounts})
 * @param defaultUser     the account of a workspace that {@code users} does not name ({@code null}: the server's own);
 *                        shared by all such workspaces, so only with {@code trustedTenants}
 */
public record SlurmSettings(String partition, String qos, String account, Path sharedDirectory, Path slurmConf, Path commands,
                            Duration commandTimeout, Duration pollInterval, Duration nodeRefresh, Duration startTimeout, int firstPort,
                            int lastPort, String gpuModel, String jobNamePrefix, List<String> inheritEnv, boolean trustedTenants,
                            boolean allowRootJobs, Map<String, String> users, String defaultUser) implements ExecutorSettings {
    public static final String NAME = "slurm";
    /**
     * What instances inherit of the server's environment unless said otherwise: not its {@code HOME} (an instance's is its
     * working directory), {@code USER} or {@code LOGNAME} (the service account's, which Slurm sets anyway).
     */
    static final List<String> DEFAULT_INHERITED_ENV = List.of("PATH", "LANG", "LC_ALL", "TZ", "JAVA_HOME");
    /** The longest a Slurm command may take: below the epoch fence's wait for its lock (20 s), which a launch holds while sbatch runs. */
    static final Duration MAX_COMMAND_TIMEOUT = Duration.ofSeconds(15);
    /** Job name prefixes: what a run id may hold, so that the name parses back (docs/slurm.md). */
    static final Pattern PREFIX = Pattern.compile("[a-z0-9][-a-z0-9]{0,31}");
    /** Unix user names as useradd takes them (never an option, a path or a uid). */
    static final Pattern USER = Pattern.compile("[a-z_][a-z0-9_-]{0,31}");

    public SlurmSettings {
        requireNonNull(partition, "partition is null");
        requireNonNull(sharedDirectory, "sharedDirectory is null");
        if (!sharedDirectory.isAbsolute()) {
            throw new IllegalArgumentException("sharedDirectory must be absolute: " + sharedDirectory);
        }
        if (sharedDirectory.toString().contains("%") || sharedDirectory.toString().contains("\\")) {
            // sbatch reads both in the paths of its output files (%j, %N, and \ turns that off).
            throw new IllegalArgumentException("sharedDirectory must not hold '%' or '\\': " + sharedDirectory);
        }
        if (commandTimeout.compareTo(MAX_COMMAND_TIMEOUT) > 0) {
            throw new IllegalArgumentException("commandTimeout must be at most 15s (the leader fence's lock wait is 20s): " + commandTimeout);
        }
        for (Duration duration : List.of(commandTimeout, pollInterval, nodeRefresh, startTimeout)) {
            if (duration.isNegative() || duration.isZero()) {
                throw new IllegalArgumentException("durations must be positive: " + duration);
            }
        }
        if (firstPort < 1024 || lastPort > 65_535 || firstPort > lastPort) {
            throw new IllegalArgumentException("ports must be a range within 1024-65535: " + firstPort + "-" + lastPort);
        }
        requireNonNull(gpuModel, "gpuModel is null");
        if (!PREFIX.matcher(jobNamePrefix).matches()) {
            throw new IllegalArgumentException("jobNamePrefix must be lower-case letters, digits and '-', up to 32: " + jobNamePrefix);
        }
        inheritEnv = List.copyOf(inheritEnv);
        users = Map.copyOf(users);
        for (Map.Entry<String, String> user : users.entrySet()) {
            if (!USER.matcher(user.getValue()).matches()) {
                throw new IllegalArgumentException("users." + user.getKey() + " must be a Unix user name: " + user.getValue());
            }
        }
        if (defaultUser != null && !USER.matcher(defaultUser).matches()) {
            throw new IllegalArgumentException("defaultUser must be a Unix user name: " + defaultUser);
        }
    }

    /** Partition {@code slipstream}, the cluster's default QOS and account, Slurm's commands on the PATH, and these defaults. */
    public static SlurmSettings defaults(Path sharedDirectory) {
        return new SlurmSettings("slipstream", null, null, sharedDirectory, null, null, Duration.ofSeconds(15), Duration.ofSeconds(2),
                Duration.ofSeconds(10), Duration.ofMinutes(5), 30_000, 39_999, "gpu", "slipstream", DEFAULT_INHERITED_ENV, false, false, Map.of(), null);
    }

    public SlurmSettings withPartition(String name) {
        return new SlurmSettings(name, qos, account, sharedDirectory, slurmConf, commands, commandTimeout, pollInterval, nodeRefresh, startTimeout,
                firstPort, lastPort, gpuModel, jobNamePrefix, inheritEnv, trustedTenants, allowRootJobs, users, defaultUser);
    }

    public SlurmSettings withQos(String name) {
        return new SlurmSettings(partition, name, account, sharedDirectory, slurmConf, commands, commandTimeout, pollInterval, nodeRefresh,
                startTimeout, firstPort, lastPort, gpuModel, jobNamePrefix, inheritEnv, trustedTenants, allowRootJobs, users, defaultUser);
    }

    public SlurmSettings withAccount(String name) {
        return new SlurmSettings(partition, qos, name, sharedDirectory, slurmConf, commands, commandTimeout, pollInterval, nodeRefresh,
                startTimeout, firstPort, lastPort, gpuModel, jobNamePrefix, inheritEnv, trustedTenants, allowRootJobs, users, defaultUser);
    }

    public SlurmSettings withSlurmConf(Path file) {
        return new SlurmSettings(partition, qos, account, sharedDirectory, file, commands, commandTimeout, pollInterval, nodeRefresh,
                startTimeout, firstPort, lastPort, gpuModel, jobNamePrefix, inheritEnv, trustedTenants, allowRootJobs, users, defaultUser);
    }

    public SlurmSettings withCommands(Path directory) {
        return new SlurmSettings(partition, qos, account, sharedDirectory, slurmConf, directory, commandTimeout, pollInterval, nodeRefresh,
                startTimeout, firstPort, lastPort, gpuModel, jobNamePrefix, inheritEnv, trustedTenants, allowRootJobs, users, defaultUser);
    }

    public SlurmSettings withCommandTimeout(Duration timeout) {
        return new SlurmSettings(partition, qos, account, sharedDirectory, slurmConf, commands, timeout, pollInterval, nodeRefresh, startTimeout,
                firstPort, lastPort, gpuModel, jobNamePrefix, inheritEnv, trustedTenants, allowRootJobs, users, defaultUser);
    }

    public SlurmSettings withPollInterval(Duration interval) {
        return new SlurmSettings(partition, qos, account, sharedDirectory, slurmConf, commands, commandTimeout, interval, nodeRefresh, startTimeout,
                firstPort, lastPort, gpuModel, jobNamePrefix, inheritEnv, trustedTenants, allowRootJobs, users, defaultUser);
    }

    public SlurmSettings withNodeRefresh(Duration interval) {
        return new SlurmSettings(partition, qos, account, sharedDirectory, slurmConf, commands, commandTimeout, pollInterval, interval, startTimeout,
                firstPort, lastPort, gpuModel, jobNamePrefix, inheritEnv, trustedTenants, allowRootJobs, users, defaultUser);
    }

    public SlurmSettings withStartTimeout(Duration timeout) {
        return new SlurmSettings(partition, qos, account, sharedDirectory, slurmConf, commands, commandTimeout, pollInterval, nodeRefresh, timeout,
                firstPort, lastPort, gpuModel, jobNamePrefix, inheritEnv, trustedTenants, allowRootJobs, users, defaultUser);
    }

    public SlurmSettings withPorts(int first, int last) {
        return new SlurmSettings(partition, qos, account, sharedDirectory, slurmConf, commands, commandTimeout, pollInterval, nodeRefresh,
                startTimeout, first, last, gpuModel, jobNamePrefix, inheritEnv, trustedTenants, allowRootJobs, users, defaultUser);
    }

    public SlurmSettings withGpuModel(String model) {
        return new SlurmSettings(partition, qos, account, sharedDirectory, slurmConf, commands, commandTimeout, pollInterval, nodeRefresh,
                startTimeout, firstPort, lastPort, model, jobNamePrefix, inheritEnv, trustedTenants, allowRootJobs, users, defaultUser);
    }

    public SlurmSettings withJobNamePrefix(String prefix) {
        return new SlurmSettings(partition, qos, account, sharedDirectory, slurmConf, commands, commandTimeout, pollInterval, nodeRefresh,
                startTimeout, firstPort, lastPort, gpuModel, prefix, inheritEnv, trustedTenants, allowRootJobs, users, defaultUser);
    }

    public SlurmSettings withInheritEnv(List<String> names) {
        return new SlurmSettings(partition, qos, account, sharedDirectory, slurmConf, commands, commandTimeout, pollInterval, nodeRefresh,
                startTimeout, firstPort, lastPort, gpuModel, jobNamePrefix, names, trustedTenants, allowRootJobs, users, defaultUser);
    }

    public SlurmSettings withTrustedTenants(boolean trusted) {
        return new SlurmSettings(partition, qos, account, sharedDirectory, slurmConf, commands, commandTimeout, pollInterval, nodeRefresh,
                startTimeout, firstPort, lastPort, gpuModel, jobNamePrefix, inheritEnv, trusted, allowRootJobs, users, defaultUser);
    }

    public SlurmSettings withAllowRootJobs(boolean allowed) {
        return new SlurmSettings(partition, qos, account, sharedDirectory, slurmConf, commands, commandTimeout, pollInterval, nodeRefresh,
                startTimeout, firstPort, lastPort, gpuModel, jobNamePrefix, inheritEnv, trustedTenants, allowed, users, defaultUser);
    }

    public SlurmSettings withUsers(Map<String, String> byWorkspace) {
        return new SlurmSettings(partition, qos, account, sharedDirectory, slurmConf, commands, commandTimeout, pollInterval, nodeRefresh,
                startTimeout, firstPort, lastPort, gpuModel, jobNamePrefix, inheritEnv, trustedTenants, allowRootJobs, byWorkspace, defaultUser);
    }

    public SlurmSettings withDefaultUser(String user) {
        return new SlurmSettings(partition, qos, account, sharedDirectory, slurmConf, commands, commandTimeout, pollInterval, nodeRefresh,
                startTimeout, firstPort, lastPort, gpuModel, jobNamePrefix, inheritEnv, trustedTenants, allowRootJobs, users, user);
    }

    /** Why {@code slurm.trustedTenants} must be true without {@code slurm.users}. */
    static final String TRUSTED_TENANTS_WHY = "must be true for the Slurm executor to start without slurm.users: every run then shares one"
            + " Unix account on the nodes, so any run can read the others' secrets and files, write them, and cancel their jobs"
            + " (docs/slurm.md, Limits); give each workspace an account of its own (slurm.users, the server running as root), or set"
            + " it to true only when every user of this server trusts the others (one team, say)";
    /** Why {@code slurm.allowRootJobs} must be true when the server runs as root and some job would run as root. */
    static final String ROOT_JOBS_WHY = "must be true for the Slurm executor to start while the server runs as root and a workspace has no"
            + " account (slurm.users, slurm.defaultUser): its tenant code then runs as root on the nodes; only for a trial on one machine";

    /** A setting that keeps the executor from starting: its field below {@code slurm} and why. */
    record Refusal(String field, String why) {
        @Override
        public String toString() {
            return "slurm." + field + " " + why;
        }
    }

    /** Why an executor with these settings must not start, or {@code null}; {@code root}: the server runs as root. */
    Refusal startRefusal(boolean root) {
        boolean ownAccounts = !users.isEmpty() || defaultUser != null;
        if (ownAccounts && !root) {
            return new Refusal(users.isEmpty() ? "defaultUser" : "users", "needs the server to run as root: jobs are submitted as other"
                    + " accounts with sbatch --uid, which only root may use");
        }
        if (!trustedTenants && users.isEmpty()) {
            return new Refusal("trustedTenants", TRUSTED_TENANTS_WHY);
        }
        if (!trustedTenants && defaultUser != null) {
            return new Refusal("defaultUser", "is one account shared by every workspace without its own: its runs could read and write each"
                    + " other's files and cancel each other's jobs; only with trustedTenants: true (or give each workspace its own in slurm.users)");
        }
        if (root && trustedTenants && defaultUser == null && !allowRootJobs) {
            return new Refusal("allowRootJobs", ROOT_JOBS_WHY);
        }
        return null;
    }

    /** Whether this process's effective user is root (the owner of {@code /proc/self}). */
    static boolean runningAsRoot() {
        try {
            return Integer.valueOf(0).equals(java.nio.file.Files.getAttribute(Path.of("/proc/self"), "unix:uid"));
        } catch (java.io.IOException | RuntimeException e) {
            return false;
        }
    }

    /** Where the instances' directories are: {@code <sharedDirectory>/instances/<run>/<attempt>/<rank>/}. */
    Path instancesRoot() {
        return sharedDirectory.resolve("instances");
    }

    /** Where the runs' storage is: {@code <sharedDirectory>/storage/<workspace>/} (as the local executor lays it out). */
    Path storageRoot() {
        return sharedDirectory.resolve("storage");
    }

    @Override
    public String executor() {
        return NAME;
    }
}
