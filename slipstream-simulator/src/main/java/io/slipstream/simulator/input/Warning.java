package io.slipstream.simulator.input;

import java.util.Locale;

/**
 * Something in an experiment that will skew its figures, found before the replay: {@code count} jobs (or rows) of
 * {@code tenant} under {@code policy} ({@code null}: every policy; for trace rows, no tenant), asking for
 * {@code gpuHours}, {@code example} the index of one job (or the line of one row).
 */
public record Warning(Kind kind, String policy, String tenant, int count, double gpuHours, long example, String detail) {
    public enum Kind {
        /** Disabled idle mode (no borrowing) and more GPUs than the tenant's guarantee: it can never start. */
        BIGGER_THAN_GUARANTEE,
        /** More GPUs than the tenant's quota may ever hold (its max). */
        BIGGER_THAN_QUOTA_MAX,
        /** More GPUs than the whole cluster. */
        BIGGER_THAN_CLUSTER,
        /** One instance asks for more GPUs than any node has. */
        INSTANCE_BIGGER_THAN_NODE,
        /** The tenant's quota guarantees 0 GPUs (a proportional share that rounds to nothing). */
        ZERO_GUARANTEE,
        /** Trace rows skipped by the mapping's rules (no end time, no GPUs). */
        ROWS_SKIPPED
    }

    /** One line for people. */
    public String message() {
        String where = (policy == null ? "" : policy + ": ") + (tenant == null ? "" : "tenant " + tenant + ": ");
        boolean one = count == 1;
        String jobs = String.format(Locale.ROOT, "%s%,d job%s (%,.0f GPU-h) %s", where, count, one ? "" : "s", gpuHours, one ? "asks" : "ask");
        String never = String.format(Locale.ROOT, ": %s can never start (e.g. job %d)", one ? "it" : "they", example);
        return switch (kind) {
            case BIGGER_THAN_GUARANTEE -> jobs + " for more than the tenant's guarantee (" + detail + ") with borrowing disabled" + never;
            case BIGGER_THAN_QUOTA_MAX -> jobs + " for more than the quota's max (" + detail + ")" + never;
            case BIGGER_THAN_CLUSTER -> jobs + " for more GPUs than the cluster has (" + detail + ")" + never;
            case INSTANCE_BIGGER_THAN_NODE -> jobs.replace(one ? " asks" : " ask", one ? " has" : " have") + " an instance bigger than any node (" + detail + ")"
                    + never;
            case ZERO_GUARANTEE -> String.format(Locale.ROOT, "%sthe quota guarantees 0 GPUs (%s): its jobs only ever run on borrowed capacity", where, detail);
            case ROWS_SKIPPED -> String.format(Locale.ROOT, "%,d trace row%s skipped: %s (e.g. line %d)", count, one ? "" : "s", detail, example);
        };
    }
}
