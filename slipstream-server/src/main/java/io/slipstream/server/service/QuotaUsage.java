package io.slipstream.server.service;

import io.slipstream.api.codec.Json;
import io.slipstream.store.RunQuery;
import io.slipstream.model.RunRecord;
import io.slipstream.store.Store;
import java.util.List;
import java.util.Set;
import tools.jackson.databind.node.ObjectNode;

/**
 * What a quota's runs went through, summed: runs, restarts by cause, and the work stops threw away. Over the runs the
 * store still keeps (retention removes old ones), newest first, at most {@link #MAX_RUNS}.
 */
public final class QuotaUsage {
    static final int MAX_RUNS = 10_000;
    private static final int PAGE = 500;

    private QuotaUsage() {
    }

    public static ObjectNode of(Store store, String workspace, String quota) {
        long runs = 0;
        long preemptions = 0;
        long failures = 0;
        long nodeLost = 0;
        long hangs = 0;
        long workLostMillis = 0;
        RunQuery.Cursor cursor = null;
        int seen = 0;
        while (seen < MAX_RUNS) {
            List<RunRecord> page = store.runs().list(new RunQuery(null, workspace, null, Set.of(), PAGE, cursor));
            for (RunRecord run : page) {
                if (quota.equals(run.spec().quota())) {
                    runs++;
                    preemptions += run.preemptions();
                    failures += run.faults().failures();
                    nodeLost += run.faults().nodeLost();
                    hangs += run.faults().hangs();
                    workLostMillis += run.faults().workLostMillis();
                }
            }
            seen += page.size();
            if (page.size() < PAGE) {
                break;
            }
            RunRecord last = page.get(page.size() - 1);
            cursor = new RunQuery.Cursor(last.createdAt().toEpochMilli(), last.id().value());
        }
        ObjectNode status = Json.mapper().createObjectNode();
        status.put("runs", runs);
        status.put("preemptions", preemptions);
        ObjectNode restarts = status.putObject("restarts");
        restarts.put("failures", failures);
        restarts.put("nodeLost", nodeLost);
        restarts.put("hangs", hangs);
        status.put("workLostSeconds", workLostMillis / 1000.0);
        return status;
    }
}
