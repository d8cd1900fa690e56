package io.slipstream.executor.local.files;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A control file the workload can replace (the Slurm executor's instance directories are the workload's to write): a
 * FIFO in its place, found before or swapped in after the check, is refused at once, never waited on.
 */
class SafeFilesTest {
    @TempDir
    Path tmp;

    private Path fifo(String name) throws Exception {
        Path fifo = tmp.resolve(name);
        Process mkfifo = new ProcessBuilder("mkfifo", fifo.toString()).start();
        assumeTrue(mkfifo.waitFor(10, TimeUnit.SECONDS) && mkfifo.exitValue() == 0, "skipped: no mkfifo");
        return fifo;
    }

    @Test
    void aFifoInPlaceOfTheExitCodeIsNoExitCodeAndNothingWaitsOnIt() throws Exception {
        fifo("exit_code");
        long start = System.nanoTime(); // a guard against a hang, not a measure of speed
        assertThat(new InstanceDirectory(tmp).exitCode()).isNull();
        assertThat(InstanceDirectory.sharedWithWorkload(tmp).exitCode()).isNull();
        assertThatThrownBy(() -> SafeFiles.readControlFile(tmp.resolve("exit_code"), 64)).isInstanceOf(SafeFiles.RefusedFile.class);
        assertThatThrownBy(() -> SafeFiles.readSharedFile(tmp.resolve("exit_code"), 64)).isInstanceOf(SafeFiles.RefusedFile.class);
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(10));
    }

    /** A FIFO swapped in after the check: its open waits for a writer, and is given up in time. */
    @Test
    void aFifoWithNoWriterIsGivenUpInTime() throws Exception {
        Path fifo = fifo("ready");
        long start = System.nanoTime();
        assertThatThrownBy(() -> SafeFiles.readInTime(fifo, 64)).isInstanceOf(SafeFiles.RefusedFile.class)
                .hasMessageContaining("did not open and read within");
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(10));
        FileChannel.open(fifo, StandardOpenOption.READ, StandardOpenOption.WRITE).close(); // lets the reader it held up go
    }

    /** A FIFO whose writer holds it open (and writes nothing) opens at once: it is refused before a read could wait. */
    @Test
    void aFifoWithAWriterIsRefusedBeforeAnythingIsRead() throws Exception {
        Path fifo = fifo("probe_failed");
        try (FileChannel writer = FileChannel.open(fifo, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            long start = System.nanoTime();
            assertThatThrownBy(() -> SafeFiles.readInTime(fifo, 64)).isInstanceOf(SafeFiles.RefusedFile.class)
                    .hasMessageContaining("is not a regular file");
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(10));
        }
    }

    @Test
    void aRegularFileIsReadAndOneTooLargeRefused() throws Exception {
        Files.writeString(tmp.resolve("exit_code"), "3\n");
        assertThat(new String(SafeFiles.readControlFile(tmp.resolve("exit_code"), 64), StandardCharsets.US_ASCII)).isEqualTo("3\n");
        assertThat(new InstanceDirectory(tmp).exitCode()).isEqualTo(3);
        assertThat(InstanceDirectory.sharedWithWorkload(tmp).exitCode()).isEqualTo(3);
        assertThat(new String(SafeFiles.readSharedFile(tmp.resolve("exit_code"), 64), StandardCharsets.US_ASCII)).isEqualTo("3\n");
        assertThat(SafeFiles.readControlFile(tmp.resolve("absent"), 64)).isNull();
        Files.writeString(tmp.resolve("big"), "x".repeat(100));
        assertThatThrownBy(() -> SafeFiles.readInTime(tmp.resolve("big"), 64)).isInstanceOf(SafeFiles.RefusedFile.class);
    }

    @Test
    void aLogSwappedForAFifoIsRefusedInTime() throws Exception {
        Path fifo = fifo("stdout.log");
        long start = System.nanoTime();
        assertThatThrownBy(() -> SafeFiles.openRegular(fifo)).isInstanceOf(SafeFiles.RefusedFile.class);
        try (FileChannel writer = FileChannel.open(fifo, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            assertThatThrownBy(() -> SafeFiles.openRegular(fifo)).isInstanceOf(SafeFiles.RefusedFile.class).hasMessageContaining("not a regular file");
        }
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(10));
    }
}
