package io.slipstream.sdk;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;

/** Writes a file so that readers see either the old content or the new, never a part: temp file, fsync, rename. */
final class AtomicFiles {
    private AtomicFiles() {
    }

    static void writeAtomically(Path target, byte[] content) throws IOException {
        Path temporary = target.resolveSibling("." + target.getFileName() + ".tmp");
        try (FileChannel channel = FileChannel.open(temporary, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING,
                StandardOpenOption.WRITE)) {
            ByteBuffer buffer = ByteBuffer.wrap(content);
            while (buffer.hasRemaining()) {
                channel.write(buffer);
            }
            channel.force(true);
        }
        Files.move(temporary, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        syncDirectory(target.toAbsolutePath().getParent());
    }

    /** Makes the rename itself durable: without it a crash of the machine may forget it. */
    static void syncDirectory(Path dir) {
        try (FileChannel channel = FileChannel.open(dir, StandardOpenOption.READ)) {
            channel.force(true);
        } catch (IOException e) {
            // Some file systems cannot open a directory: the rename is atomic all the same.
        }
    }
}
