package io.slipstream.examples.training;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.zip.CRC32;

/**
 * Checkpoints in {@code SLIPSTREAM_CHECKPOINT_DIR}, which outlives the run's attempts: written to a temporary file,
 * flushed to disk, then renamed, with a checksum, so a checkpoint is never seen half-written; the last few are kept.
 */
final class Checkpoints {
    private static final int MAGIC = 0x534c5053; // "SLPS"
    private static final int KEEP = 3;

    record Checkpoint(long step, double[] parameters) {
    }

    private final Path dir;

    Checkpoints(Path dir) {
        this.dir = dir;
    }

    void save(long step, double[] parameters) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(parameters.length * 8 + 32);
        DataOutputStream out = new DataOutputStream(bytes);
        out.writeInt(MAGIC);
        out.writeLong(step);
        out.writeInt(parameters.length);
        for (double value : parameters) {
            out.writeDouble(value);
        }
        CRC32 crc = new CRC32();
        crc.update(bytes.toByteArray());
        out.writeLong(crc.getValue());
        Path temporary = dir.resolve(".step-" + step + ".tmp");
        try (FileChannel channel = FileChannel.open(temporary, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING,
                StandardOpenOption.WRITE)) {
            channel.write(ByteBuffer.wrap(bytes.toByteArray()));
            channel.force(true);
        }
        Files.move(temporary, dir.resolve(String.format("step-%012d.ckpt", step)), StandardCopyOption.ATOMIC_MOVE);
        List<Path> all = list();
        for (int i = 0; i < all.size() - KEEP; i++) {
            Files.deleteIfExists(all.get(i));
        }
    }

    /** The newest checkpoint that reads back whole, if any. */
    Optional<Checkpoint> latest(int expectedLength) throws IOException {
        List<Path> all = list();
        for (int i = all.size() - 1; i >= 0; i--) {
            Optional<Checkpoint> checkpoint = read(all.get(i), expectedLength);
            if (checkpoint.isPresent()) {
                return checkpoint;
            }
        }
        return Optional.empty();
    }

    private static Optional<Checkpoint> read(Path file, int expectedLength) {
        try {
            byte[] content = Files.readAllBytes(file);
            if (content.length < 24) {
                return Optional.empty();
            }
            CRC32 crc = new CRC32();
            crc.update(content, 0, content.length - 8);
            DataInputStream in = new DataInputStream(new java.io.ByteArrayInputStream(content));
            if (in.readInt() != MAGIC) {
                return Optional.empty();
            }
            long step = in.readLong();
            int length = in.readInt();
            if (length != expectedLength || content.length != 16 + length * 8 + 8) {
                return Optional.empty();
            }
            double[] parameters = new double[length];
            for (int i = 0; i < length; i++) {
                parameters[i] = in.readDouble();
            }
            return in.readLong() == crc.getValue() ? Optional.of(new Checkpoint(step, parameters)) : Optional.empty();
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    private List<Path> list() throws IOException {
        List<Path> files = new ArrayList<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir, "step-*.ckpt")) {
            entries.forEach(files::add);
        }
        files.sort(null);
        return files;
    }
}
