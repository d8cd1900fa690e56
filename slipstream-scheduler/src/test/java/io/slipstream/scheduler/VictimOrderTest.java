package io.slipstream.scheduler;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.run.QuotaId;
import io.slipstream.api.run.RealTimeResources;
import io.slipstream.api.run.RunId;
import io.slipstream.api.spec.IdleMode;
import io.slipstream.api.spec.Resources;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Preemption for fairness orders a side's borrowers by copies of what orders victims ({@link QuotaBorrowers.Borrowed}):
 * the copies must order them as {@link VictimSearch#VICTIM_ORDER} does, ties within a second and checkpoints before
 * the start included.
 */
class VictimOrderTest {
    @Test
    void theCopiesOrderBorrowersAsTheVictimOrderDoes() {
        Random random = new Random(11);
        Instant t0 = Instant.parse("2026-06-01T00:00:00Z");
        List<ActiveRun> runs = new ArrayList<>();
        for (int i = 0; i < 400; i++) {
            // Few distinct values, so that every field decides some pairs and ties reach the id.
            Instant started = t0.plusSeconds(random.nextInt(4)).plusNanos(random.nextInt(3) * 1_000L);
            Instant checkpoint = switch (random.nextInt(3)) {
                case 0 -> null;
                case 1 -> started.minusSeconds(1); // before the start: the start counts
                default -> t0.plusSeconds(4 + random.nextInt(2)).plusNanos(random.nextInt(2)); // runs of different starts tie on it
            };
            runs.add(new ActiveRun(new RunId("r-" + random.nextInt(1_000)), new QuotaId("b", "gpu"), IdleMode.OnlyIdle, random.nextInt(3), started,
                    checkpoint, RealTimeResources.NotInQuota, List.of(), false, null));
        }
        for (ActiveRun a : runs) {
            for (ActiveRun b : runs) {
                int expected = Integer.signum(VictimSearch.VICTIM_ORDER.compare(a, b));
                int actual = Integer.signum(QuotaBorrowers.Borrowed.inVictimOrder(new QuotaBorrowers.Borrowed(a, Resources.NONE),
                        new QuotaBorrowers.Borrowed(b, Resources.NONE)));
                assertThat(actual).as("%s against %s", a, b).isEqualTo(expected);
            }
        }
    }
}
