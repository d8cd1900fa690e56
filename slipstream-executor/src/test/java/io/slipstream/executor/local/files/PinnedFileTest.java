package io.slipstream.executor.local.files;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a workload's file is taken as, whatever the workload makes of it: only a regular file of its owner with no other
 * name is pinned, read and copied, at the size it had when pinned, and nothing of it keeps the server waiting.
 */
@Timeout(60) // an open that waits on a lease would hang the test instead of failing it
class PinnedFileTest {
    @TempDir
    Path dir;

    private Path pins;
    private Path report;
    private int me;

    @BeforeEach
    void setUp() throws Exception {
        pins = PinnedFile.prepareDirectory(dir.resolve(".pins"));
        report = Files.createDirectories(dir.resolve("report"));
        me = (Integer) Files.getAttribute(dir, "unix:uid");
    }

    @Test
    void onlyARegularFileOfItsOwnerWithNoOtherNameIsTaken() throws Exception {
        Path server = Files.writeString(dir.resolve("admin.token"), "secret");
        Path file = report.resolve("file");

        Files.createSymbolicLink(file, server);
        assertRefused(file, me, "is a symbolic link");
        Files.delete(file);

        assertThat(new ProcessBuilder("mkfifo", file.toString()).start().waitFor()).isZero();
        assertRefused(file, me, "is not a regular file");
        Files.delete(file);

        Files.createDirectory(file);
        assertRefused(file, me, "cannot be read");
        Files.delete(file);

        Files.createLink(file, server);
        assertRefused(file, me, "has other names");
        Files.delete(file);

        Files.writeString(file, "{}");
        assertRefused(file, me + 1, "does not belong to the instance's user");
        assertThat(PinnedFile.take(report.resolve("missing"), pins, me)).isNull();
        try (var left = Files.list(pins)) {
            assertThat(left).as("no pin is left of a refused file").isEmpty();
        }
    }

    @Test
    void aFileIsReadAndCopiedAtTheSizeItHadWhenPinnedAndOneThatShrankIsRefused() throws Exception {
        Path archive = Files.writeString(report.resolve("image.tar"), "0123456789");
        try (PinnedFile pinned = PinnedFile.take(archive, pins, me)) {
            Files.writeString(archive, "more", StandardOpenOption.APPEND); // its owner goes on writing
            Path copy = dir.resolve("copy.tar");
            pinned.copyTo(copy, pinned.attributes().size());
            assertThat(Files.readString(copy)).isEqualTo("0123456789");
            // The workload removes its own name: the pin is the only one left, and still the same file.
            Files.delete(archive);
            assertThat(new String(pinned.read(64), StandardCharsets.UTF_8)).isEqualTo("0123456789more");
            assertThatThrownBy(() -> pinned.read(8)).isInstanceOf(SafeFiles.RefusedFile.class).hasMessageContaining("larger than 8 bytes");
            try (var channel = java.nio.channels.FileChannel.open(pinned.pin(), StandardOpenOption.WRITE)) {
                channel.truncate(4);
            }
            Path shrunk = dir.resolve("shrunk.tar");
            assertThatThrownBy(() -> pinned.copyTo(shrunk, 10)).isInstanceOf(IOException.class).hasMessageContaining("shrank");
            assertThat(Files.exists(shrunk, LinkOption.NOFOLLOW_LINKS)).as("what was copied of it is removed").isFalse();
        }
        try (var left = Files.list(pins)) {
            assertThat(left).isEmpty();
        }
    }

    /**
     * A lease its owner holds (fcntl F_SETLEASE) makes every other open of the file wait for the kernel's
     * lease-break-time (45 s by default); a reader gives up at once, saying why.
     */
    @Test
    void aFileItsOwnerHoldsALeaseOnKeepsNoReaderWaiting() throws Exception {
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/python3")), "needs python3 to take a lease");
        Path progress = Files.writeString(report.resolve("progress.json"), "{\"step\": 7}");
        String lease = "import fcntl, signal, sys, time\n"
                + "signal.signal(signal.SIGIO, signal.SIG_IGN)\n"
                + "held = open(sys.argv[1], 'r+')\n"
                + "try:\n"
                + "    fcntl.fcntl(held, fcntl.F_SETLEASE, fcntl.F_WRLCK)\n"
                + "    print('leased', flush=True)\n"
                + "except OSError as e:\n"
                + "    print('no lease:', e, flush=True)\n"
                + "time.sleep(600)\n";
        Process holder = new ProcessBuilder("/usr/bin/python3", "-c", lease, progress.toString()).redirectErrorStream(true).start();
        try {
            String said = new String(holder.getInputStream().readNBytes(6), StandardCharsets.UTF_8);
            assumeTrue(said.equals("leased"), () -> "this kernel gives no leases: " + said);
            for (int read = 0; read < 2; read++) {
                long start = System.nanoTime();
                assertThatThrownBy(() -> SafeFiles.readWorkloadFile(progress, pins, 1024, me)).isInstanceOf(PinnedFile.Stalled.class);
                assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(PinnedFile.OPEN_PATIENCE.plusSeconds(2));
            }
            try (PinnedFile pinned = PinnedFile.take(progress, pins, me)) {
                assertThatThrownBy(() -> pinned.copyTo(dir.resolve("copy"), 4)).isInstanceOf(PinnedFile.Stalled.class);
            }
            try (var left = Files.list(pins)) {
                assertThat(left).as("the pins go while their opens still wait").isEmpty();
            }
        } finally {
            holder.destroyForcibly().waitFor();
        }
        assertThat(SafeFiles.readWorkloadFile(progress, pins, 1024, me).data()).as("read again once the lease is gone")
                .isEqualTo("{\"step\": 7}".getBytes(StandardCharsets.UTF_8));
    }

    private void assertRefused(Path file, int owner, String why) {
        assertThatThrownBy(() -> PinnedFile.take(file, pins, owner)).as(why).isInstanceOf(SafeFiles.RefusedFile.class).hasMessageContaining(why);
    }
}
