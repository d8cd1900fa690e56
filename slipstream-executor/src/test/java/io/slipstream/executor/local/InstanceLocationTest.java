package io.slipstream.executor.local;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class InstanceLocationTest {
    private static final Path ROOT = Path.of("/data/new/instances");
    private static final Path BY_ID = ROOT.resolve("r1/2/0");

    /** {@code expected}: the directory found, or {@code null} for a Missing whose reason contains {@code reason}. */
    record Case(String name, String stored, Set<Path> directories, Path expected, boolean moved, String reason) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Case> cases() {
        return Stream.of(
                new Case("relative, as handles are written now", "r1/2/0", Set.of(), BY_ID, false, null),
                new Case("relative, not looked for on disk", "r1/2/0", Set.of(BY_ID), BY_ID, false, null),
                new Case("old absolute handle under the root", "/data/new/instances/r1/2/0", Set.of(), BY_ID, false, null),
                new Case("old absolute, data directory moved, instance there", "/data/old/instances/r1/2/0", Set.of(BY_ID), BY_ID, true, null),
                new Case("old absolute, data directory moved, instance not there", "/data/old/instances/r1/2/0", Set.of(), null, false,
                        "moved or restored without its instances"),
                new Case("old absolute, only the old place exists", "/data/old/instances/r1/2/0", Set.of(Path.of("/data/old/instances/r1/2/0")), null,
                        false, "is outside /data/new/instances"),
                new Case("relative, leading out of the root", "../../etc", Set.of(), null, false, "leads out of"),
                new Case("the root itself", "", Set.of(), null, false, "names no directory"),
                new Case("no directory at all", null, Set.of(BY_ID), null, false, "names no directory"));
    }

    @ParameterizedTest
    @MethodSource("cases")
    void locates(Case c) {
        InstanceLocation location = InstanceLocation.of(ROOT, c.stored(), BY_ID, c.directories()::contains);
        if (c.expected() == null) {
            assertThat(location).isInstanceOfSatisfying(InstanceLocation.Missing.class, m -> assertThat(m.reason()).contains(c.reason()));
        } else {
            assertThat(location).isEqualTo(new InstanceLocation.Found(c.expected(), c.moved()));
        }
    }
}
