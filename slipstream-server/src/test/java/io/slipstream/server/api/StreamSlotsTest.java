package io.slipstream.server.api;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class StreamSlotsTest {
    @Test
    void aUsersStreamBeyondTheirBoundReplacesTheirOldestOnly() {
        StreamSlots slots = new StreamSlots(2, 10);
        StreamSlots.Slot first = slots.take("ann");
        StreamSlots.Slot second = slots.take("ann");
        StreamSlots.Slot bens = slots.take("ben");
        StreamSlots.Slot third = slots.take("ann");
        assertThat(first.replaced).isTrue();
        assertThat(second.replaced).isFalse();
        assertThat(third.replaced).isFalse();
        assertThat(bens.replaced).isFalse();
        assertThat(slots.open()).isEqualTo(3);
        slots.release(first); // the replaced stream ends later: its place was given already
        assertThat(slots.open()).isEqualTo(3);
        slots.release(second);
        slots.release(third);
        slots.release(bens);
        assertThat(slots.open()).isZero();
    }

    @Test
    void aFullServerRefusesNewUsersButAUserAtTheirBoundStillReplacesTheirOwn() {
        StreamSlots slots = new StreamSlots(2, 3);
        StreamSlots.Slot a1 = slots.take("ann");
        slots.take("ann");
        slots.take("ben");
        assertThat(slots.take("cat")).as("the server holds 3").isNull();
        assertThat(slots.take("ben")).as("ben has 1 of 2, but the server is full").isNull();
        assertThat(slots.take("ann")).as("ann's newest takes her oldest's place").isNotNull();
        assertThat(a1.replaced).isTrue();
        assertThat(slots.open()).isEqualTo(3);
        slots.release(slots.take("ann")); // and a released place is free again
        assertThat(slots.open()).isEqualTo(2);
        assertThat(slots.take("cat")).isNotNull();
    }
}
