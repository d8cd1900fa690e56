package io.slipstream.sdk;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.zip.CRC32;

/**
 * Checkpoints in a directory that outlives attempts ({@code SLIPSTREAM_CHECKPOINT_DIR}). A checkpoint is never
 * half-visible: it is written to a temporary file, flushed to disk, and renamed to {@code step-<step>.ckpt}; a checksum
 * guards against a torn disk. The newest {@code keep} are kept. Each save is reported as progress, so that the
 * platform knows from where a restart resumes.
 */
public final class Checkpoints {
    private static final int MAGIC = 0x534c5043; // "SLPC"
    private static final int HEADER = 4 + 8 + 4;
    private static final int TRAILER = 8;

    /** A complete checkpoint: the step it was taken after, and what the workload saved. */
    public record Checkpoint(long step, byte[] data) {
    }

    private final Path dir;
    private final int keep;
    private final Progress progress;

    Checkpoints(Path dir, int keep, Progress progress) {
        if (keep < 1) {
            throw new IllegalArgumentException("keep must be at least 1");
        }
        this.dir = dir;
        this.keep = keep;
        this.progress = progress;
    }

    public Path directory() {
        return dir;
    }

    /** Saves {@code data} as the checkpoint of {@code step}, atomically, then drops all but the newest {@code keep}. */
    public void save(long step, byte[] data) throws IOException {
        if (step < 0) {
            throw new IllegalArgumentException("step must not be negative");
        }
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(data.length + HEADER + TRAILER);
        DataOutputStream out = new DataOutputStream(bytes);
        out.writeInt(MAGIC);
        out.writeLong(step);
        out.writeInt(data.length);
        out.write(data);
        CRC32 crc = new CRC32();
        crc.update(bytes.toByteArray());
        out.writeLong(crc.getValue());
        Files.createDirectories(dir);
        AtomicFiles.writeAtomically(dir.resolve(fileName(step)), bytes.toByteArray());
        List<Path> all = list();
        for (int i = 0; i < all.size() - keep; i++) {
            Files.deleteIfExists(all.get(i));
        }
        if (progress != null) {
            progress.checkpointed(step);
        }
    }

    /** The newest checkpoint that reads back whole; older ones are tried if the newest is damaged. */
    public Optional<Checkpoint> latest() throws IOException {
        if (!Files.isDirectory(dir)) {
            return Optional.empty();
        }
        List<Path> all = list();
        for (int i = all.size() - 1; i >= 0; i--) {
            Optional<Checkpoint> checkpoint = read(all.get(i));
            if (checkpoint.isPresent()) {
                return checkpoint;
            }
        }
        return Optional.empty();
    }

    static String fileName(long step) {
        return String.format(java.util.Locale.ROOT, "step-%019d.ckpt", step);
    }

    private static Optional<Checkpoint> read(Path file) {
        try {
            byte[] content = Files.readAllBytes(file);
            if (content.length < HEADER + TRAILER) {
                return Optional.empty();
            }
            CRC32 crc = new CRC32();
            crc.update(content, 0, content.length - TRAILER);
            DataInputStream in = new DataInputStream(new ByteArrayInputStream(content));
            if (in.readInt() != MAGIC) {
                return Optional.empty();
            }
            long step = in.readLong();
            int length = in.readInt();
            if (length < 0 || content.length != HEADER + length + TRAILER) {
                return Optional.empty();
            }
            byte[] data = in.readNBytes(length);
            return in.readLong() == crc.getValue() ? Optional.of(new Checkpoint(step, data)) : Optional.empty();
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    private List<Path> list() throws IOException {
        List<Path> files = new ArrayList<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir, "step-*.ckpt")) {
            entries.forEach(files::add);
        }
        files.sort(null); // zero-padded steps: name order is step order
        return files;
    }
}
