package io.slipstream.store.memory;

import io.slipstream.api.run.InstanceId;
import io.slipstream.api.spec.Document;
import io.slipstream.api.spec.Kind;
import io.slipstream.model.InstanceRecord;
import io.slipstream.model.RunEvent;
import io.slipstream.model.RunRecord;
import io.slipstream.store.NodeCondition;
import io.slipstream.store.SecretRecord;
import io.slipstream.store.StoredDocument;
import io.slipstream.store.TokenRecord;
import java.time.Instant;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;

/**
 * Every table of an {@link InMemoryStore}, with their keys. A committed {@code Tables} is never changed; a working
 * copy shares its maps until it first writes one (the accessor methods named like the fields copy a map on first
 * use: read through the fields, write through the methods).
 */
final class Tables {
    record DocumentKey(Kind kind, String workspace, String name) implements Comparable<DocumentKey> {
        static DocumentKey of(Document<?> document) {
            return new DocumentKey(document.kind(), DocumentTable.workspaceKey(document.workspace()), document.name());
        }

        @Override
        public int compareTo(DocumentKey other) {
            return Comparator.comparing(DocumentKey::kind).thenComparing(DocumentKey::workspace).thenComparing(DocumentKey::name)
                    .compare(this, other);
        }
    }

    record NameKey(String workspace, String name) implements Comparable<NameKey> {
        @Override
        public int compareTo(NameKey other) {
            return Comparator.comparing(NameKey::workspace).thenComparing(NameKey::name).compare(this, other);
        }
    }

    record ScheduleKey(String workspace, String job) {
    }

    record InstanceKey(int attempt, int rank) implements Comparable<InstanceKey> {
        static InstanceKey of(InstanceId id) {
            return new InstanceKey(id.attempt(), id.rank());
        }

        @Override
        public int compareTo(InstanceKey other) {
            return attempt != other.attempt ? Integer.compare(attempt, other.attempt) : Integer.compare(rank, other.rank);
        }
    }

    TreeMap<DocumentKey, StoredDocument> documents = new TreeMap<>();
    TreeMap<String, TokenRecord> tokens = new TreeMap<>();
    TreeMap<NameKey, SecretRecord> secrets = new TreeMap<>();
    TreeMap<String, String> serverKeys = new TreeMap<>();
    TreeMap<String, io.slipstream.store.IdentityKey> identityKeys = new TreeMap<>();
    TreeMap<String, RunRecord> runs = new TreeMap<>();
    /** By run id, then attempt and rank. */
    TreeMap<String, TreeMap<InstanceKey, InstanceRecord>> instances = new TreeMap<>();
    /** By run id, each run's in order of their numbers (immutable lists). */
    HashMap<String, List<RunEvent>> events = new HashMap<>();
    HashMap<ScheduleKey, Instant> schedules = new HashMap<>();
    /** Nodes declared down, draining or cordoned (the JDBC store's {@code nodes_down}). */
    TreeMap<String, NodeCondition> nodesDown = new TreeMap<>();
    /** Usage segments in the order they were opened (a copy per write: the in-memory store is for tests and trials). */
    java.util.ArrayList<io.slipstream.store.UsageSegment> usage = new java.util.ArrayList<>();
    /** The fence: the epoch that the leader's writes must be at (0: none yet). Its lease is kept apart ({@link Leases}). */
    long fenceEpoch;

    /** Which maps (and which runs' instance maps) this working copy owns already. */
    private final Set<String> owned = new HashSet<>();

    Tables copy() {
        Tables copy = new Tables();
        copy.documents = documents;
        copy.tokens = tokens;
        copy.secrets = secrets;
        copy.serverKeys = serverKeys;
        copy.identityKeys = identityKeys;
        copy.runs = runs;
        copy.instances = instances;
        copy.events = events;
        copy.schedules = schedules;
        copy.nodesDown = nodesDown;
        copy.usage = usage;
        copy.fenceEpoch = fenceEpoch;
        return copy;
    }

    /** This copy, to be published: it is not written again. */
    Tables frozen() {
        owned.clear();
        owned.add("frozen");
        return this;
    }

    private boolean own(String table) {
        if (owned.contains("frozen")) {
            throw new IllegalStateException("a committed state is never changed");
        }
        return owned.add(table);
    }

    TreeMap<DocumentKey, StoredDocument> documents() {
        if (own("documents")) {
            documents = new TreeMap<>(documents);
        }
        return documents;
    }

    TreeMap<String, TokenRecord> tokens() {
        if (own("tokens")) {
            tokens = new TreeMap<>(tokens);
        }
        return tokens;
    }

    TreeMap<NameKey, SecretRecord> secrets() {
        if (own("secrets")) {
            secrets = new TreeMap<>(secrets);
        }
        return secrets;
    }

    TreeMap<String, String> serverKeys() {
        if (own("serverKeys")) {
            serverKeys = new TreeMap<>(serverKeys);
        }
        return serverKeys;
    }

    TreeMap<String, io.slipstream.store.IdentityKey> identityKeys() {
        if (own("identityKeys")) {
            identityKeys = new TreeMap<>(identityKeys);
        }
        return identityKeys;
    }

    TreeMap<String, RunRecord> runs() {
        if (own("runs")) {
            runs = new TreeMap<>(runs);
        }
        return runs;
    }

    TreeMap<String, TreeMap<InstanceKey, InstanceRecord>> instances() {
        if (own("instances")) {
            instances = new TreeMap<>(instances);
        }
        return instances;
    }

    /** The instances of one run, to write. */
    TreeMap<InstanceKey, InstanceRecord> instancesOf(String runId) {
        TreeMap<String, TreeMap<InstanceKey, InstanceRecord>> all = instances();
        TreeMap<InstanceKey, InstanceRecord> ofRun = all.get(runId);
        if (own("instances/" + runId) || ofRun == null) { // shared with the committed state, or removed meanwhile
            ofRun = ofRun == null ? new TreeMap<>() : new TreeMap<>(ofRun);
            all.put(runId, ofRun);
        }
        return ofRun;
    }

    HashMap<String, List<RunEvent>> events() {
        if (own("events")) {
            events = new HashMap<>(events);
        }
        return events;
    }

    HashMap<ScheduleKey, Instant> schedules() {
        if (own("schedules")) {
            schedules = new HashMap<>(schedules);
        }
        return schedules;
    }

    java.util.ArrayList<io.slipstream.store.UsageSegment> usage() {
        if (own("usage")) {
            usage = new java.util.ArrayList<>(usage);
        }
        return usage;
    }

    TreeMap<String, NodeCondition> nodesDown() {
        if (own("nodesDown")) {
            nodesDown = new TreeMap<>(nodesDown);
        }
        return nodesDown;
    }
}
