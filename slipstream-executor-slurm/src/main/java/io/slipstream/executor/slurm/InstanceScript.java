package io.slipstream.executor.slurm;

import io.slipstream.executor.ExecutorException;
import io.slipstream.executor.local.files.SafeFiles;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The batch script of every instance's job ({@code instance.sh}, beside this class): a fixed wrapper that reads the
 * instance's command and environment from files in its directory, runs the command, survives the polite signal of a
 * stop to record how the command ended, and tries the startup probe. This class installs it where sbatch reads it and
 * writes the files it reads.
 */
final class InstanceScript {
    static final String RESOURCE = "instance.sh";
    /** The files the script reads and writes, in the instance's directory (see instance.sh). */
    static final String ARGV = "argv";
    static final String PROBE = "probe";
    /** Where the wrapper writes what it records, as the job's account: the workload's {@code report/} (the directory itself is the server's). */
    static final String REPORT = "report";
    static final String SLURM_JOB = "slurm_job";
    static final String PROBE_FAILED = "probe_failed";
    static final String READY = "ready";
    static final String EXIT_CODE = "exit_code";

    private InstanceScript() {
    }

    /** The script's text. */
    static byte[] text() {
        try (InputStream in = InstanceScript.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException(RESOURCE + " is missing from the executor's jar");
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new IllegalStateException("cannot read " + RESOURCE + ": " + e.getMessage(), e);
        }
    }

    /** Writes the script into {@code directory} (the server's, made if missing) and returns its path; sbatch copies it at each submission. */
    static Path install(Path directory) {
        try {
            Files.createDirectories(directory);
            Path script = directory.resolve(RESOURCE);
            SafeFiles.writeControlFile(script, text(), "rwxr-xr-x");
            return script;
        } catch (IOException e) {
            throw new ExecutorException("cannot write the instance script into " + directory + ": " + e.getMessage(), e);
        }
    }

    /** Writes the command (NUL after each argument) where the script reads it. */
    static void writeCommand(Path instanceDir, List<String> command) throws IOException {
        writeForJob(instanceDir, ARGV, nulSeparated(command));
    }

    /**
     * A file of the server's that the job reads: readable by the directory's group (the job's account's, slurm.users),
     * writable by the server alone.
     */
    private static void writeForJob(Path instanceDir, String name, byte[] data) throws IOException {
        Path file = instanceDir.resolve(name);
        SafeFiles.writeControlFile(file, data, "rw-r-----");
        Object group = Files.getAttribute(instanceDir, "unix:gid", java.nio.file.LinkOption.NOFOLLOW_LINKS);
        Files.setAttribute(file, "unix:gid", group, java.nio.file.LinkOption.NOFOLLOW_LINKS);
    }

    /** Writes the startup probe where the script reads it: its period, threshold and initial delay, then its command. */
    static void writeProbe(Path instanceDir, io.slipstream.api.spec.StartupProbe probe) throws IOException {
        List<String> fields = new java.util.ArrayList<>(List.of(Integer.toString(probe.periodSeconds()), Integer.toString(probe.failureThreshold()),
                Integer.toString(probe.initialDelaySeconds())));
        fields.addAll(probe.command());
        writeForJob(instanceDir, PROBE, nulSeparated(fields));
    }

    private static byte[] nulSeparated(List<String> arguments) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        for (String argument : arguments) {
            if (argument.indexOf('\0') >= 0) {
                throw new ExecutorException("an argument holds a NUL character: no command can be given it");
            }
            bytes.writeBytes(argument.getBytes(StandardCharsets.UTF_8));
            bytes.write(0);
        }
        return bytes.toByteArray();
    }

    /** What a failed probe left: "startup probe failed N time(s) in a row (last exit code C)", or {@code null} if it did not fail. */
    static String probeFailure(Path instanceDir) {
        try {
            byte[] data = SafeFiles.readSharedFile(instanceDir.resolve(REPORT).resolve(PROBE_FAILED), 64);
            if (data == null) {
                return null;
            }
            String[] fields = new String(data, StandardCharsets.US_ASCII).trim().split(" ");
            return "startup probe failed " + fields[0] + " time(s) in a row" + (fields.length > 1 ? " (last exit code " + fields[1] + ")" : "");
        } catch (IOException e) {
            return "startup probe failed (" + e.getMessage() + ")";
        }
    }

    /**
     * The job id the script recorded once it ran, or {@code null}: the workload can write it, so whatever it holds is
     * returned only if it is a Slurm job id (digits), and {@code ""} otherwise.
     */
    static String recordedJob(Path instanceDir) {
        try {
            byte[] data = SafeFiles.readSharedFile(instanceDir.resolve(REPORT).resolve(SLURM_JOB), 64);
            if (data == null) {
                return null;
            }
            String job = new String(data, StandardCharsets.US_ASCII).trim();
            return SlurmHandles.isJobId(job) ? job : "";
        } catch (IOException e) {
            return "";
        }
    }

    /** Whether the startup probe passed (the wrapper recorded {@code ready}); nothing of it is opened. */
    static boolean ready(Path instanceDir) {
        return Files.exists(instanceDir.resolve(REPORT).resolve(READY), java.nio.file.LinkOption.NOFOLLOW_LINKS);
    }

    /**
     * How the command ended, as the wrapper recorded it (a whole line), or {@code null}: not yet, or not an exit code
     * (0-255), which the workload may have written there instead.
     */
    static Integer exitCode(Path instanceDir) {
        try {
            byte[] data = SafeFiles.readSharedFile(instanceDir.resolve(REPORT).resolve(EXIT_CODE), 64);
            String line = data == null ? "" : new String(data, StandardCharsets.US_ASCII);
            if (!line.matches("\\d{1,3}\n")) {
                return null; // no newline yet: being written
            }
            int code = Integer.parseInt(line.trim());
            return code <= 255 ? code : null;
        } catch (IOException e) {
            return null;
        }
    }
}
