package io.slipstream.server.control;

import io.slipstream.store.ConflictException;
import io.slipstream.store.Store;
import io.slipstream.store.StoreTx;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BiFunction;

/**
 * Writes that belong together in time (a cycle's admissions, a run's launches) in one transaction, and, when one of
 * them conflicts (its record changed meanwhile), each in a transaction of its own, so that the others are still written.
 */
final class Batched {
    private Batched() {
    }

    /** What was written, and the items whose write conflicted (none was written for them). */
    record Outcome<I, R>(List<R> written, List<I> conflicted) {
    }

    static <I, R> Outcome<I, R> write(Store store, List<I> items, BiFunction<StoreTx, I, R> write) {
        if (items.isEmpty()) {
            return new Outcome<>(List.of(), List.of());
        }
        try {
            return new Outcome<>(store.write(tx -> items.stream().map(item -> write.apply(tx, item)).toList()), List.of());
        } catch (ConflictException e) {
            List<R> written = new ArrayList<>();
            List<I> conflicted = new ArrayList<>();
            for (I item : items) {
                try {
                    written.add(store.write(tx -> write.apply(tx, item)));
                } catch (ConflictException conflict) {
                    conflicted.add(item);
                }
            }
            return new Outcome<>(written, conflicted);
        }
    }
}
