package io.slipstream.server.api;

import io.slipstream.api.spec.Document;
import io.slipstream.api.spec.ObjectMeta;
import io.slipstream.api.spec.SpecWriter;
import io.slipstream.api.wire.InstanceView;
import io.slipstream.api.wire.RunEventView;
import io.slipstream.api.wire.RunView;
import io.slipstream.store.InstanceRecord;
import io.slipstream.store.RunEvent;
import io.slipstream.store.RunRecord;
import io.slipstream.store.StoredDocument;
import java.util.List;
import tools.jackson.databind.node.ObjectNode;

/** Maps stored records to what the API returns. */
final class Views {
    private Views() {
    }

    static RunView run(RunRecord run, List<InstanceRecord> instances, RunView.QueueView queue, boolean withSpec) {
        return new RunView(run.id().value(), run.job(), run.workspace(), run.jobVersion(), run.state(), run.reason(), run.attempt(),
                run.priority(), queue, run.createdAt(), run.startedAt(), run.finishedAt(),
                instances.stream().map(Views::instance).toList(),
                withSpec ? SpecWriter.write(new Document<>(ObjectMeta.of(run.job(), run.workspace()), run.spec())) : null);
    }

    static InstanceView instance(InstanceRecord instance) {
        return new InstanceView(instance.nodeGroup(), instance.id().rank(), instance.groupRank(), instance.id().attempt(), instance.node(),
                instance.gpus(), instance.state(), instance.exitCode(), instance.reason(), instance.startedAt(), instance.finishedAt());
    }

    static RunEventView event(RunEvent event) {
        return new RunEventView(event.seq(), event.time(), event.type(), event.state(), event.reason(), event.message(), event.instance());
    }

    static ObjectNode document(StoredDocument stored) {
        return SpecWriter.write(stored.versioned());
    }
}
