package io.slipstream.scheduler;

import java.util.List;

/** The guaranteed pass's order ({@link Scheduler}, step 3), by place in the queue. */
final class GuaranteedPassOrder {
    private GuaranteedPassOrder() {
    }

    /** Runs whose reclaimed capacity is free now (it is theirs), then the rest, each in queue order. */
    static int[] of(List<PendingRun> queue) {
        int[] order = new int[queue.size()];
        int next = 0;
        for (int i = 0; i < queue.size(); i++) {
            if (queue.get(i).reclaimed()) {
                order[next++] = i;
            }
        }
        for (int i = 0; i < queue.size() && next < order.length; i++) {
            if (!queue.get(i).reclaimed()) {
                order[next++] = i;
            }
        }
        return order;
    }
}
