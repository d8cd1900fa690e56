package io.slipstream.executor.local.uid;

import io.slipstream.executor.ExecutorException;
import io.slipstream.executor.local.files.LockFile;
import io.slipstream.executor.local.files.SafeFiles;
import io.slipstream.executor.local.process.ProcFs;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which server owns which uids on this machine. Every server that isolates instances claims a range in a directory
 * all servers of the machine share (default {@value #DEFAULT_DIRECTORY}): one file per range, {@code <first>-<last>},
 * naming the data directory that owns it and a random claim id, which the data directory records too
 * ({@code uid-range}). Instances outlive their server, and files on disk keep their uids, so a claim outlives the
 * server as well: it is given up only when its data directory is gone (or holds another claim) and no process runs
 * under any uid of the range.
 *
 * <p>A server asks for a range ({@code instances.uidRange}) and is refused if any other claim overlaps it, or lets
 * one be chosen: the one its data directory recorded, else the first free block of {@value #BLOCK} from
 * {@value Isolation#DEFAULT_FIRST_UID} on. Ranges that hold users of {@code /etc/passwd} or the subordinate ids of
 * {@code /etc/subuid} and {@code /etc/subgid} are never taken. Claiming happens under a lock of the directory.
 */
public final class UidRangeClaims {
    private static final Logger LOG = LoggerFactory.getLogger(UidRangeClaims.class);
    public static final String DEFAULT_DIRECTORY = "/var/lib/slipstream/uid-ranges";
    public static final int BLOCK = 65_536;
    static final long HIGHEST = Integer.MAX_VALUE - 1L;
    private static final String RECORD = "uid-range";
    private static final Pattern NAME = Pattern.compile("(\\d{1,10})-(\\d{1,10})");

    /** A range of uids: {@code [first, first + count)}. */
    public record Range(int first, int count) {
        public Range {
            if (first < 1000 || count < 1 || (long) first + count - 1 > HIGHEST) {
                throw new IllegalArgumentException("bad uid range " + first + " + " + count);
            }
        }

        long last() {
            return (long) first + count - 1;
        }

        boolean overlaps(Range other) {
            return first <= other.last() && other.first <= last();
        }

        boolean contains(long uid) {
            return uid >= first && uid <= last();
        }

        String fileName() {
            return first + "-" + last();
        }

        @Override
        public String toString() {
            return first + "-" + last();
        }
    }

    /** A claim as its file says: the range, the data directory that owns it, and the claim's id. */
    private record Claim(Range range, Path owner, String id, Path file) {
    }

    private UidRangeClaims() {
    }

    /**
     * Claims a range for the server of {@code dataDir} and returns the isolation it gives.
     *
     * @param requested the range the configuration names, or {@code null} to take the recorded or a free one
     * @throws ExecutorException naming the other owner if the range is not free
     */
    public static Isolation claim(Path claimsDir, Path dataDir, Range requested) {
        Path data = dataDir.toAbsolutePath().normalize();
        // A file lock excludes other processes only: threads of this one (two servers in one JVM) queue here first.
        synchronized (UidRangeClaims.class) {
            return claimExclusively(claimsDir, data, requested);
        }
    }

    private static Isolation claimExclusively(Path claimsDir, Path data, Range requested) {
        try {
            Files.createDirectories(claimsDir);
            Files.setPosixFilePermissions(claimsDir, PosixFilePermissions.fromString("rwxr-xr-x"));
            try (LockFile ignored = LockFile.lock(claimsDir.resolve(".lock"))) {
                return claimLocked(claimsDir, data, requested);
            }
        } catch (IOException e) {
            throw new ExecutorException("cannot claim a uid range in " + claimsDir + ": " + e.getMessage(), e);
        }
    }

    private static Isolation claimLocked(Path claimsDir, Path data, Range requested) throws IOException {
        Claim recorded = readRecord(data);
        List<Claim> others = new ArrayList<>();
        Set<Integer> running = null;
        for (Claim claim : readClaims(claimsDir)) {
            if (recorded != null && claim.id().equals(recorded.id())) {
                continue; // ours
            }
            if (!isLive(claim)) {
                running = running == null ? ProcFs.realUids() : running;
                List<Integer> still = running.stream().filter(claim.range()::contains).sorted().toList();
                if (still.isEmpty()) {
                    LOG.info("uid range {} was claimed by {}, which is gone; the claim is given up", claim.range(), claim.owner());
                    Files.deleteIfExists(claim.file());
                    continue;
                }
                LOG.warn("uid range {} was claimed by {}, which is gone, but processes of its uids {} still run: the claim stays until they"
                        + " end (pkill -KILL -U UID for each), then the next start gives it up", claim.range(), claim.owner(), still);
            }
            others.add(claim);
        }
        List<Range> reserved = SystemUsers.ranges();
        Range range;
        if (requested != null) {
            if (recorded != null && !recorded.range().equals(requested)) {
                throw new ExecutorException("this data directory's runs use uids " + recorded.range() + ", not instances.uidRange " + requested
                        + "; to move to another range, remove " + data.resolve(RECORD) + " once no run's files are left in " + data.resolve("instances"));
            }
            for (Claim other : others) {
                if (other.range().overlaps(requested)) {
                    throw new ExecutorException("uid range " + requested + " overlaps " + other.range() + ", which the server of " + other.owner()
                            + " holds (" + other.file() + "); choose another instances.uidRange");
                }
            }
            for (Range system : reserved) {
                if (system.overlaps(requested)) {
                    throw new ExecutorException("uid range " + requested + " overlaps uids " + system
                            + " of this machine's users (/etc/passwd, /etc/subuid, /etc/subgid); choose another instances.uidRange");
                }
            }
            range = requested;
        } else if (recorded != null) {
            range = recorded.range();
            for (Claim other : others) {
                if (other.range().overlaps(range)) {
                    throw new ExecutorException("this data directory's uid range " + range + " is now held by the server of " + other.owner()
                            + " (" + other.file() + ")");
                }
            }
        } else {
            range = firstFreeBlock(others, reserved);
        }
        String id = recorded != null ? recorded.id() : newId();
        Path file = claimsDir.resolve(range.fileName());
        String content = "dataDir=" + data + "\nclaim=" + id + "\n";
        SafeFiles.writeControlFile(file, content.getBytes(StandardCharsets.UTF_8), "rw-r--r--");
        if (recorded == null) {
            SafeFiles.writeControlFile(data.resolve(RECORD), (range.first() + " " + range.count() + " " + id + "\n").getBytes(StandardCharsets.UTF_8),
                    "rw-------");
        }
        return new Isolation(true, range.first(), range.count());
    }

    /**
     * Gives up the claim of {@code dataDir} (a data directory about to be removed, whose server has closed), unless a
     * process still runs under one of its uids; a later start would give it up too, but the demo's leave nothing behind.
     */
    public static void release(Path claimsDir, Path dataDir) {
        Path data = dataDir.toAbsolutePath().normalize();
        try {
            Claim recorded = readRecord(data);
            if (recorded == null || !Files.isDirectory(claimsDir)) {
                return;
            }
            try (LockFile ignored = LockFile.lock(claimsDir.resolve(".lock"))) {
                for (Claim claim : readClaims(claimsDir)) {
                    if (claim.id().equals(recorded.id()) && ProcFs.realUids().stream().noneMatch(claim.range()::contains)) {
                        Files.deleteIfExists(claim.file());
                        LOG.info("uid range {} of {} is given up", claim.range(), data);
                    }
                }
            }
        } catch (IOException | RuntimeException e) {
            LOG.warn("cannot give up the uid range of {}: {} (the next start on this machine gives it up)", data, e.toString());
        }
    }

    private static Range firstFreeBlock(List<Claim> others, List<Range> reserved) {
        for (long first = Isolation.DEFAULT_FIRST_UID; first + BLOCK - 1 <= HIGHEST; first += BLOCK) {
            Range candidate = new Range((int) first, BLOCK);
            if (others.stream().noneMatch(c -> c.range().overlaps(candidate)) && reserved.stream().noneMatch(candidate::overlaps)) {
                return candidate;
            }
        }
        throw new ExecutorException("no free uid range is left on this machine");
    }

    /** A claim is live while its data directory exists and records the same claim. */
    private static boolean isLive(Claim claim) {
        try {
            Claim record = readRecord(claim.owner());
            return record != null && record.id().equals(claim.id());
        } catch (IOException e) {
            return true; // cannot tell: keep it
        }
    }

    private static Claim readRecord(Path data) throws IOException {
        Path file = data.resolve(RECORD);
        String text;
        try {
            byte[] bytes = SafeFiles.readControlFile(file, 256);
            if (bytes == null) {
                return null;
            }
            text = new String(bytes, StandardCharsets.UTF_8).trim();
        } catch (NoSuchFileException e) {
            return null;
        }
        String[] fields = text.split(" ");
        try {
            return new Claim(new Range(Integer.parseInt(fields[0]), Integer.parseInt(fields[1])), data, fields[2], file);
        } catch (RuntimeException e) {
            throw new ExecutorException(file + " is damaged (expected 'FIRST COUNT CLAIM'): " + text);
        }
    }

    private static List<Claim> readClaims(Path claimsDir) throws IOException {
        List<Claim> claims = new ArrayList<>();
        try (DirectoryStream<Path> files = Files.newDirectoryStream(claimsDir)) {
            for (Path file : files) {
                Matcher name = NAME.matcher(file.getFileName().toString());
                if (!name.matches()) {
                    continue;
                }
                long first = Long.parseLong(name.group(1));
                long last = Long.parseLong(name.group(2));
                byte[] bytes = SafeFiles.readControlFile(file, 4096);
                if (bytes == null || first < 1000 || last < first || last > HIGHEST) {
                    continue;
                }
                String owner = null;
                String id = null;
                for (String line : new String(bytes, StandardCharsets.UTF_8).split("\n")) {
                    if (line.startsWith("dataDir=")) {
                        owner = line.substring("dataDir=".length());
                    } else if (line.startsWith("claim=")) {
                        id = line.substring("claim=".length());
                    }
                }
                if (owner == null || id == null) {
                    throw new ExecutorException("uid range claim " + file + " is damaged; remove it only if no server uses those uids");
                }
                claims.add(new Claim(new Range((int) first, (int) (last - first + 1)), Path.of(owner), id, file));
            }
        }
        return claims;
    }

    private static String newId() {
        byte[] bytes = new byte[12];
        new SecureRandom().nextBytes(bytes);
        return HexFormat.of().formatHex(bytes);
    }
}
