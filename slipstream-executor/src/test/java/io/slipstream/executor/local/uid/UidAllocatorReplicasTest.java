package io.slipstream.executor.local.uid;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.run.RunId;
import io.slipstream.executor.local.files.Trash;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Replicas of the control plane on one machine share the instances root (and so the fence, the uid range claimed
 * for the data directory, and every run's files): each has an executor of its own, made at its start. The replica
 * that takes over must not give a new run (or workspace) an id that the one before gave while this one stood by:
 * two runs of different teams under one uid can read and signal each other's processes and files, and the end of
 * one kills the other (the uid sweep); two workspaces under one gid share their storage.
 */
class UidAllocatorReplicasTest {
    private static final Isolation ISOLATION = new Isolation(true, 3_900_000, 16);

    @TempDir
    Path dir;

    private UidAllocator replica() throws IOException {
        return new UidAllocator(Files.createDirectories(dir.resolve("instances")), dir.resolve("storage"), ISOLATION,
                new Trash(dir.resolve("instances").resolve(".trash")));
    }

    @Test
    void theNewLeaderNeverGivesAUidOrGidTheOldLeaderGaveWhileItStoodBy() throws IOException {
        UidAllocator a = replica(); // both replicas start; a leads
        UidAllocator b = replica();
        int first = a.uidFor(RunId.newFor("first"));
        int gidOfTeamA = a.gidFor("team-a");
        // a is frozen past its lease; b takes over, adopts "first" (still running) and starts runs of its own
        int second = b.uidFor(RunId.newFor("second"));
        int gidOfTeamB = b.gidFor("team-b");
        assertThat(second).as("uid of a run of another team, while the first still runs").isNotEqualTo(first);
        assertThat(gidOfTeamB).as("gid of another workspace's storage").isNotEqualTo(gidOfTeamA).isNotIn(first, second);
        assertThat(gidOfTeamA).isNotIn(first, second);
    }

    @Test
    void aRunKeepsItsUidWhicheverReplicaLaunchesIt() throws IOException {
        UidAllocator a = replica();
        UidAllocator b = replica();
        RunId run = RunId.newFor("job");
        assertThat(b.uidFor(run)).isEqualTo(a.uidFor(run));
    }

    /**
     * An allocator reads every uid file again only when another one gave an id since it last did (the cursor file says
     * so): with thousands of runs kept, reading them all before every launch was most of the launch. Here the other
     * replica's id is the one this one would give next, round the range, if it did not read the files again.
     */
    @Test
    void anIdTheOtherReplicaGaveIsSeenEvenWhenTheRangeWrapsToIt() throws IOException {
        Isolation four = new Isolation(true, 3_900_000, 4);
        Path instances = Files.createDirectories(dir.resolve("instances"));
        UidAllocator a = new UidAllocator(instances, dir.resolve("storage"), four, new Trash(instances.resolve(".trash")));
        UidAllocator b = new UidAllocator(instances, dir.resolve("storage"), four, new Trash(instances.resolve(".trash")));
        java.util.Set<Integer> given = new java.util.HashSet<>();
        for (int i = 0; i < 3; i++) {
            given.add(a.uidFor(RunId.newFor("a")));
        }
        int bs = b.uidFor(RunId.newFor("b"));
        assertThat(given).doesNotContain(bs);
        // a's cursor is at the end of the range: it wraps, and every id is taken (one of them by b)
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> a.uidFor(RunId.newFor("a")))
                .isInstanceOf(io.slipstream.executor.ExecutorException.class).hasMessageContaining("every id of the range");
    }

    @Test
    void anAllocatorAloneGivesEachIdOnceWithoutReadingTheFilesAgain() throws IOException {
        UidAllocator a = replica();
        java.util.Set<Integer> given = new java.util.HashSet<>();
        for (int i = 0; i < 16; i++) {
            assertThat(given.add(a.uidFor(RunId.newFor("a")))).isTrue();
        }
        assertThat(a.uidFor(new RunId(dir.resolve("instances").toFile().list((d, n) -> !n.startsWith("."))[0]))).isIn(given);
    }
}
