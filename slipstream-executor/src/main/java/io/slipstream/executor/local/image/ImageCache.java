package io.slipstream.executor.local.image;

import io.slipstream.executor.local.files.LockFile;
import io.slipstream.executor.local.files.PinnedFile;
import io.slipstream.executor.local.files.SafeFiles;
import io.slipstream.executor.local.files.SystemCommand;
import io.slipstream.executor.local.files.Trash;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Images unpacked on this machine, under {@code <data>/images/}: one OCI layout that holds every image's blobs
 * ({@code layout/}, shared layers stored once) and one root filesystem per image, named by its manifest's digest
 * ({@code rootfs/<hex>/rootfs}), owned by the server and shared read-only by every instance that runs the image.
 *
 * <p>What a job names is read as the run's own user: skopeo copies it, as that uid, into a directory of its own
 * ({@code staging/<random>/image.tar}), so a path the run cannot read cannot be pulled, and a FIFO or a slow registry
 * blocks only that copy (which has a deadline). The server then takes the copy by a hard link (never following a
 * link, and only a regular file of that uid), copies it into a file of its own, and only that file is imported into
 * the layout and unpacked (skopeo and umoci, as the server). An image is pulled again only when what the reference
 * names changed (the archive's or layout index's inode, size and times, looked at as the run's user), or for registry
 * references after {@link #REGISTRY_RECHECK}.
 *
 * <p>Root filesystems nothing used for longer than the retention are removed by {@link #collect}, with their tags;
 * {@code umoci gc} then lets go of blobs no image needs.
 */
public final class ImageCache {
    private static final Logger LOG = LoggerFactory.getLogger(ImageCache.class);
    public static final Duration DEFAULT_PULL_TIMEOUT = Duration.ofMinutes(10);
    public static final Duration DEFAULT_RETENTION = Duration.ofDays(7);
    static final Duration REGISTRY_RECHECK = Duration.ofMinutes(5);
    /** Importing and unpacking a copy that is already on this disk. */
    private static final Duration TOOL_TIMEOUT = Duration.ofMinutes(30);
    /** Looking at what a reference names (a stat, as the run) is done within a launch: a hung file system gets this long. */
    private static final Duration LOOK_TIMEOUT = Duration.ofSeconds(5);
    /** The largest image archive a pull may leave: the copy the server takes of it goes on the data disk. */
    static final long MAX_ARCHIVE_BYTES = 64L << 30;
    public static final String DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
    /** Made in every root filesystem that lacks them: bubblewrap mounts onto them, and the image itself is read-only. */
    static final List<String> MOUNT_POINTS = List.of("proc", "dev", "tmp", "slipstream");
    private static final SecureRandom RANDOM = new SecureRandom();

    /** An unpacked image: its digest, its root file system and the environment its config gives ({@code NAME=value}). */
    public record Image(String digest, Path rootfs, List<String> env) {
        /** The image's PATH, or the usual one if it sets none. */
        public String path() {
            return env.stream().filter(entry -> entry.startsWith("PATH=")).map(entry -> entry.substring(5)).findFirst().orElse(DEFAULT_PATH);
        }
    }

    private final Path dir;
    private final Path layout;
    private final ImageLayout index;
    private final Path unpacked;
    private final Path staging;
    /** Where a pull's archive is pinned to be taken (see {@link #take}). */
    private final Path pins;
    private final Trash trash;
    private final Duration pullTimeout;
    private final Clock clock;
    /** What a reference was found to be, by the reference and what it names now (see {@link #fingerprint}). */
    private final Map<String, String> known = new ConcurrentHashMap<>();
    /** When each key's image was last pulled (registry references are looked up again after {@link #REGISTRY_RECHECK}). */
    private final Map<String, java.time.Instant> pulledAt = new ConcurrentHashMap<>();
    /** The pulls under way (or ended and not yet asked about), by the key of {@link #known}. */
    private final Map<String, java.util.concurrent.CompletableFuture<String>> pulls = new ConcurrentHashMap<>();
    /** One import or collection at a time in this process; the file lock keeps out other servers on this data dir. */
    private final ReentrantLock importing = new ReentrantLock();

    public ImageCache(Path dir, Duration pullTimeout, Clock clock) throws IOException {
        this.dir = dir;
        this.layout = dir.resolve("layout");
        this.index = new ImageLayout(layout);
        this.unpacked = dir.resolve("rootfs");
        this.staging = dir.resolve("staging");
        this.pins = dir.resolve(".pins");
        this.pullTimeout = pullTimeout;
        this.clock = clock;
        Files.createDirectories(dir);
        // Instances pass through to their root file system; nobody else may list or read what is here.
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx--x--x"));
        for (Path own : List.of(unpacked, staging)) {
            Files.createDirectories(own);
            Files.setPosixFilePermissions(own, PosixFilePermissions.fromString("rwx--x--x"));
        }
        for (Path own : List.of(pins, dir.resolve("incoming"), dir.resolve("unpacking"))) {
            Files.createDirectories(own);
            Files.setPosixFilePermissions(own, PosixFilePermissions.fromString("rwx------"));
        }
        this.trash = new Trash(dir.resolve(".trash"));
        // The layout lists every image's digest and holds every blob: the server's alone (instances read unpacked copies).
        Files.createDirectories(layout);
        Files.setPosixFilePermissions(layout, PosixFilePermissions.fromString("rwx------"));
        for (Path leftovers : List.of(staging, pins, dir.resolve("incoming"), dir.resolve("unpacking"))) {
            sweep(leftovers); // what a server that died while pulling left
        }
    }

    /** Removes what is in {@code directory} (never following a link), but its lock. */
    private static void sweep(Path directory) throws IOException {
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(directory)) {
            for (Path entry : entries) {
                if (!entry.getFileName().toString().equals(".lock")) {
                    SystemCommand.Result removed = SystemCommand.run(List.of("rm", "-rf", "--one-file-system", "--", entry.toString()), TOOL_TIMEOUT);
                    if (!removed.succeeded()) {
                        LOG.warn("cannot remove {}: {}", entry, removed.output());
                    }
                }
            }
        }
    }

    /** Whether skopeo and umoci are installed: without them, a job with an image cannot run here. */
    public static String missingTools() {
        List<String> missing = new ArrayList<>();
        for (String tool : List.of("skopeo", "umoci", "bwrap")) {
            if (!Files.isExecutable(Path.of("/usr/bin", tool))) {
                missing.add(tool);
            }
        }
        return missing.isEmpty() ? null : String.join(", ", missing);
    }

    /**
     * The image {@code reference} names, pulled and unpacked first if it is not here yet (this call waits for that).
     *
     * @param uid the run's uid, as which the reference is read; {@code null}: the server's own user (no isolation)
     * @param gid the group of the workspace's storage the run's instances join (an image may lie there), or {@code null}
     * @throws IOException saying why it cannot be had (missing, unreadable by the run, corrupt, the tools failed)
     */
    public Image prepare(String tenant, ImageReference reference, Integer uid, Integer gid) throws IOException {
        List<String> user = asUser(uid, gid);
        String key = keyOf(tenant, reference, user);
        Image image = lookUp(key);
        if (image == null) {
            String digest = pullAndUnpack(reference, uid, user, key);
            known.put(key, digest);
            image = loaded(reference, digest);
        }
        return used(image);
    }

    /**
     * The image {@code reference} names if it is here; if not, its pull and unpacking start in the {@code background}
     * (once, however many launches ask meanwhile) and this throws {@link io.slipstream.executor.LaunchNotReadyException}:
     * a launch never waits for a pull. Once that ended, the next call returns the image, or throws why it failed (once:
     * the call after that pulls again).
     *
     * @throws IOException what {@link #prepare} throws, or what the pull in the background failed with
     */
    public Image prepareInBackground(String tenant, ImageReference reference, Integer uid, Integer gid, java.util.concurrent.Executor background)
            throws IOException {
        List<String> user = asUser(uid, gid);
        String key = keyOf(tenant, reference, user);
        Image image = lookUp(key);
        if (image != null) {
            pulls.computeIfPresent(key, (k, ended) -> ended.isDone() ? null : ended); // found by its tag as it ended
            if (!reference.transport().local()) {
                refreshInBackground(key, reference, uid, user, background);
            }
            return used(image);
        }
        java.util.concurrent.CompletableFuture<String> pull = pulls.computeIfAbsent(key, k -> java.util.concurrent.CompletableFuture.supplyAsync(() -> {
            try {
                return pullAndUnpack(reference, uid, user, key);
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }, background));
        if (!pull.isDone()) {
            throw new io.slipstream.executor.LaunchNotReadyException("image " + reference + " is being pulled and unpacked");
        }
        pulls.remove(key, pull);
        try {
            String digest = pull.join();
            known.put(key, digest);
            return used(loaded(reference, digest));
        } catch (java.util.concurrent.CompletionException e) {
            Throwable cause = e.getCause() instanceof java.io.UncheckedIOException unchecked ? unchecked.getCause() : e.getCause();
            throw cause instanceof IOException io ? io : new IOException(String.valueOf(cause.getMessage()), cause);
        }
    }

    /**
     * Who pulls what: the tenant (a run's uid goes to another tenant later; what one tenant copied must never be taken
     * for what another names), the reference, and what it names now. A registry's tag is looked up again in the
     * background every {@link #REGISTRY_RECHECK} ({@link #refreshInBackground}); the image it named meanwhile is used.
     */
    private String keyOf(String tenant, ImageReference reference, List<String> user) throws IOException {
        String names = reference.transport().local() ? fingerprint(reference, user) : "registry";
        return tenant + "\n" + reference + "\n" + names;
    }

    /** Pulls a registry reference again if it was last pulled longer than {@link #REGISTRY_RECHECK} ago; never waits. */
    private void refreshInBackground(String key, ImageReference reference, Integer uid, List<String> user, java.util.concurrent.Executor background) {
        java.time.Instant last = pulledAt.get(key);
        if (last != null && last.plus(REGISTRY_RECHECK).isAfter(clock.instant())) {
            return;
        }
        pulledAt.put(key, clock.instant()); // one refresh per period, whatever happens to it
        background.execute(() -> {
            try {
                known.put(key, pullAndUnpack(reference, uid, user, key));
            } catch (IOException | RuntimeException e) {
                LOG.warn("cannot look up {} again (the image pulled before is used): {}", reference, e.getMessage());
            }
        });
    }

    /** The image {@code key} was found to be before, here or in the layout (after a restart), if it is unpacked. */
    private Image lookUp(String key) throws IOException {
        String digest = known.get(key);
        if (digest == null) {
            digest = index.taggedDigest(tagOf(key));
            if (digest != null) {
                known.put(key, digest);
            }
        }
        return digest == null ? null : load(digest);
    }

    private String pullAndUnpack(ImageReference reference, Integer uid, List<String> user, String key) throws IOException {
        pulledAt.put(key, clock.instant());
        Path copy = pull(reference, uid, user);
        try {
            return importAndUnpack(copy, tagOf(key));
        } finally {
            Files.deleteIfExists(copy);
        }
    }

    private Image loaded(ImageReference reference, String digest) throws IOException {
        Image image = load(digest);
        if (image == null) {
            throw new IOException("image " + reference + " was unpacked but is not there (removed meanwhile?)");
        }
        return image;
    }

    /** Marks the image used now: {@link #collect} keeps it for the retention from here. */
    private Image used(Image image) throws IOException {
        ImageLayout.markUsed(unpacked.resolve(hex(image.digest())), clock.instant());
        return image;
    }

    /**
     * What the reference names now, as the run's user sees it: a file's device, inode, size and times (a change of any
     * pulls it again), checked readable by that user (never opened: a FIFO cannot block this).
     */
    private String fingerprint(ImageReference reference, List<String> user) throws IOException {
        String script = "test -r \"$1\" && { [ -z \"$2\" ] || test -x \"$2\"; } && exec stat -L -c '%d:%i:%s:%Y:%Z' -- \"$1\"";
        String directory = reference.transport() == ImageReference.Transport.OCI_LAYOUT ? reference.path() : "";
        List<String> argv = new ArrayList<>(user);
        argv.addAll(List.of("sh", "-c", script, "look", reference.changeMarker(), directory));
        SystemCommand.Result result = SystemCommand.run(argv, LOOK_TIMEOUT);
        if (!result.succeeded()) {
            throw new IOException(reference.changeMarker() + " does not exist or cannot be read by the run's user");
        }
        return result.output();
    }

    /** Copies the image, as the run's user, into an archive of the server's (see the class comment); returns it. */
    private Path pull(ImageReference reference, Integer uid, List<String> user) throws IOException {
        Path stage = staging.resolve(random());
        Files.createDirectory(stage, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        try {
            if (uid != null) {
                SafeFiles.chown(stage, uid, uid);
            }
            Path archive = stage.resolve("image.tar");
            List<String> argv = new ArrayList<>(user);
            // The machine's policy and registries, never files the run could have put into its HOME first.
            argv.addAll(List.of("skopeo", "--policy", "/etc/containers/policy.json", "copy", "--quiet", reference.toString(), "oci-archive:" + archive));
            SystemCommand.Result result = SystemCommand.run(argv, Map.of("HOME", stage.toString(), "TMPDIR", stage.toString(),
                    "REGISTRIES_CONFIG_PATH", "/etc/containers/registries.conf", "CONTAINERS_REGISTRIES_CONF", "/etc/containers/registries.conf"),
                    pullTimeout, 4000);
            if (!result.succeeded()) {
                throw new IOException("cannot pull " + reference + ": " + skopeoMessage(result.output()));
            }
            return take(archive, uid);
        } finally {
            SystemCommand.Result removed = SystemCommand.run(List.of("rm", "-rf", "--one-file-system", "--", stage.toString()), TOOL_TIMEOUT);
            if (!removed.succeeded()) {
                LOG.warn("cannot remove {}: {}", stage, removed.output());
            }
        }
    }

    /**
     * The archive the run's user wrote, copied into a file only the server can change: taken by a hard link, and only as
     * a regular file of that uid with no other name ({@link PinnedFile}).
     */
    private Path take(Path archive, Integer uid) throws IOException {
        try (PinnedFile pinned = PinnedFile.take(archive, pins, uid)) {
            if (pinned == null) {
                throw new NoSuchFileException(archive.toString());
            }
            long size = pinned.attributes().size();
            SystemCommand.Result blocks = SystemCommand.run(List.of("stat", "-c", "%b", "--", pinned.pin().toString()), LOOK_TIMEOUT); // never opens it
            long allocated = blocks.succeeded() && blocks.output().matches("[0-9]{1,19}") ? Long.parseLong(blocks.output()) * 512 : 0;
            if (size > MAX_ARCHIVE_BYTES || allocated < size / 2) {
                // A sparse file would be copied (and filled) at its full size.
                throw new IOException("the pulled image is larger than " + (MAX_ARCHIVE_BYTES >> 30) + " GiB or has holes");
            }
            // As large as it was when taken: the run's processes could go on appending to it (they own it) while it is copied.
            Path copy = dir.resolve("incoming").resolve(random() + ".tar");
            pinned.copyTo(copy, size);
            return copy;
        } catch (SafeFiles.RefusedFile e) {
            throw new IOException("the pulled image is not a regular file of the run's user", e);
        }
    }

    /** Imports the server's copy into the layout under {@code tag} and unpacks it unless it is unpacked already. */
    private String importAndUnpack(Path copy, String tag) throws IOException {
        return underLock(() -> {
            SystemCommand.Result imported = SystemCommand.run(List.of("skopeo", "copy", "--quiet", "oci-archive:" + copy, "oci:" + layout + ":" + tag),
                    Map.of("TMPDIR", dir.resolve("incoming").toString()), TOOL_TIMEOUT, 4000);
            if (!imported.succeeded()) {
                throw new IOException("the image is not a valid OCI archive: " + skopeoMessage(imported.output()));
            }
            String digest = index.digestOf(tag);
            Path target = unpacked.resolve(hex(digest));
            if (ImageLayout.complete(target)) {
                return digest;
            }
            if (Files.exists(target, LinkOption.NOFOLLOW_LINKS)) {
                trash.take(target, "image-" + hex(digest)); // half unpacked by a server that died
            }
            Path bundle = dir.resolve("unpacking").resolve(random());
            run(List.of("umoci", "unpack", "--image", layout + ":" + tag, bundle.toString()), "the image cannot be unpacked");
            try {
                prepareRootfs(bundle);
                Files.move(bundle, target, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
            } catch (IOException | RuntimeException e) {
                trash.take(bundle, "unpacking-" + bundle.getFileName());
                throw e;
            }
            ImageLayout.markComplete(target, digest);
            LOG.info("image {} unpacked into {}", digest, target);
            return digest;
        });
    }

    /**
     * Passable by instances, with the directories bubblewrap mounts onto, and nothing in it that would serve anyone
     * on this machine who finds its path (every uid may pass through to it): no device nodes, FIFOs or sockets (a
     * tenant's image could carry a node of this machine's disk), no set-uid or set-gid bits (a root shell), nothing
     * others may write (one tenant changing the image another runs). Instances see none of that anyway: the image
     * is read-only to them, bubblewrap makes their {@code /dev}, and they run with no new privileges.
     */
    private static void prepareRootfs(Path bundle) throws IOException {
        Files.setPosixFilePermissions(bundle, PosixFilePermissions.fromString("rwx--x--x"));
        Path rootfs = bundle.resolve("rootfs");
        run(List.of("find", rootfs.toString(), "-xdev", "(", "-type", "b", "-o", "-type", "c", "-o", "-type", "p", "-o", "-type", "s", ")",
                "-delete"), "cannot remove the image's special files");
        // Owned by root (which also clears file capabilities: a cap_setuid binary would be a root shell for any local
        // user), then nothing set-id and nothing anyone but root may change.
        run(List.of("chown", "-R", "-h", "0:0", "--", rootfs.toString()), "cannot give the image to root");
        run(List.of("chmod", "-R", "go-w,ug-s", "--", rootfs.toString()), "cannot take away the image's write and set-id bits");
        for (String name : MOUNT_POINTS) {
            Path point = rootfs.resolve(name);
            if (!Files.exists(point, LinkOption.NOFOLLOW_LINKS)) {
                Files.createDirectory(point);
                Files.setPosixFilePermissions(point, PosixFilePermissions.fromString("rwxr-xr-x"));
            } else if (!Files.isDirectory(point, LinkOption.NOFOLLOW_LINKS)) {
                throw new IOException("the image's /" + name + " is not a directory (a link or a file): it cannot be mounted on");
            }
        }
    }

    /** The unpacked image of {@code digest}, or {@code null} if it is not (completely) here. */
    private Image load(String digest) throws IOException {
        Path bundle = unpacked.resolve(hex(digest));
        if (!ImageLayout.complete(bundle)) {
            return null;
        }
        return new Image(digest, bundle.resolve("rootfs"), ImageLayout.env(bundle));
    }

    /**
     * Removes every image nothing used for {@code retention}, except those in {@code inUse} (digests), and lets go of
     * their blobs.
     *
     * @return how many images were removed
     */
    public int collect(Set<String> inUse, Duration retention) throws IOException {
        return underLock(() -> {
            int removed = 0;
            java.time.Instant before = clock.instant().minus(retention);
            Set<String> gone = new java.util.HashSet<>();
            try (DirectoryStream<Path> images = Files.newDirectoryStream(unpacked)) {
                for (Path image : images) {
                    String digest = "sha256:" + image.getFileName();
                    if (!inUse.contains(digest) && ImageLayout.lastUsed(image).isBefore(before)) {
                        trash.take(image, "image-" + image.getFileName());
                        gone.add(digest);
                        removed++;
                    }
                }
            }
            if (!gone.isEmpty() && Files.exists(layout.resolve("index.json"))) {
                for (ImageLayout.Tagged manifest : index.manifests()) {
                    if (gone.contains(manifest.digest())) {
                        run(List.of("umoci", "rm", "--image", layout + ":" + manifest.tag()), "cannot untag " + manifest.tag());
                    }
                }
                run(List.of("umoci", "gc", "--layout", layout.toString()), "cannot collect the layout's blobs");
                known.values().removeIf(gone::contains);
            }
            for (Path entry : trash.entries()) {
                trash.delete(entry);
            }
            return removed;
        });
    }

    private interface Locked<T> {
        T run() throws IOException;
    }

    private <T> T underLock(Locked<T> action) throws IOException {
        importing.lock();
        try (LockFile ignored = LockFile.lock(dir.resolve("incoming").resolve(".lock"))) {
            return action.run();
        } finally {
            importing.unlock();
        }
    }

    private static void run(List<String> argv, String what) throws IOException {
        SystemCommand.Result result = SystemCommand.run(argv, TOOL_TIMEOUT, 4000);
        if (!result.succeeded()) {
            throw new IOException(what + ": " + skopeoMessage(result.output()));
        }
    }

    /** skopeo's and umoci's messages without their log decoration ({@code time=... level=fatal msg="..."}). */
    static String skopeoMessage(String output) {
        java.util.regex.Matcher message = java.util.regex.Pattern.compile("msg=\"((?:[^\"\\\\]|\\\\.)*)\"").matcher(output);
        String text = message.find() ? message.group(1).replace("\\\"", "\"") : output;
        return text.length() > 500 ? text.substring(0, 500) + "..." : text;
    }

    /** The command prefix that runs a tool as {@code uid}: no privileges, no groups of the server's. */
    static List<String> asUser(Integer uid, Integer gid) {
        if (uid == null) {
            return List.of();
        }
        return List.of("setpriv", "--reuid=" + uid, "--regid=" + uid, gid == null ? "--clear-groups" : "--groups=" + gid, "--no-new-privs", "--");
    }

    private static String tagOf(String key) {
        try {
            return "k" + HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8))).substring(0, 40);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    static String hex(String digest) {
        return digest.substring(digest.indexOf(':') + 1);
    }

    private static String random() {
        byte[] bytes = new byte[16];
        RANDOM.nextBytes(bytes);
        return HexFormat.of().formatHex(bytes);
    }
}
