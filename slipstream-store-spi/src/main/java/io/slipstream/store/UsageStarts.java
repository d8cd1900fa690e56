package io.slipstream.store;

import io.slipstream.model.usage.UsageChange;
import io.slipstream.model.usage.UsageKind;
import java.util.List;

/**
 * When a run starts, for the waits every store counts (one definition, so that the database stores and the in-memory
 * one agree): told from the changes of one {@link StoreTx#recordUsage} call as they are applied, never from segments
 * found later (a store that rolls a segment up when it closes, as a database store does, cannot look ahead). A change
 * that ends a run's segment starts the run if it opens held time (in quota or borrowed) itself, or if it is a
 * {@link UsageChange.Closed} that an opening of held time of the same run at the same instant follows in the same call,
 * as {@code UsageChanges.between} writes an admission or a promotion. An opening in a later call is no start of that
 * segment's run (it was closed and counted already), and a measurement is no start whatever it holds.
 */
public final class UsageStarts {
    private UsageStarts() {
    }

    /** Whether the change {@code changes[closing]}, which ends its run's open segment, starts the run. */
    public static boolean startsRun(List<UsageChange> changes, int closing) {
        UsageChange change = changes.get(closing);
        if (change instanceof UsageChange.Opened opened) {
            return held(opened.kind());
        }
        if (!(change instanceof UsageChange.Closed closed)) {
            return false;
        }
        for (UsageChange later : changes.subList(closing + 1, changes.size())) {
            if (later instanceof UsageChange.Opened opened && opened.run().equals(closed.run())) {
                return held(opened.kind()) && opened.at().equals(closed.at());
            }
        }
        return false;
    }

    private static boolean held(UsageKind kind) {
        return kind == UsageKind.IN_QUOTA || kind == UsageKind.BORROWED;
    }
}
