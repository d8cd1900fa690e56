package io.slipstream.executor.kubernetes;

import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.RunId;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Names and labels of the objects the executor makes. Kubernetes limits names that become DNS labels (services, pod
 * host names) and label values to 63 characters; run ids may be longer, so long ones are shortened with a hash.
 * Every object carries the run (and, for pods, the attempt and rank), so that a restarted control plane finds it.
 */
final class Names {
    static final String MANAGED_BY = "app.kubernetes.io/managed-by";
    static final String MANAGER = "slipstream";
    static final String RUN = "slipstream.io/run";
    static final String ATTEMPT = "slipstream.io/attempt";
    static final String NODE_GROUP = "slipstream.io/node-group";
    static final String RANK = "slipstream.io/rank";
    /** Which restart in place of its instance a pod runs; absent on a first launch (0), as in the handle. */
    static final String RESTART = "slipstream.io/restart";
    static final String WORKSPACE = "slipstream.io/workspace";
    static final String JOB = "slipstream.io/job";
    /** The leader epoch of the executor that created a pod (see {@link KubernetesFence}). */
    static final String EPOCH = "slipstream.io/epoch";
    /** The leader epoch of the executor that stopped a pod: stamped on it just before its deletion. */
    static final String STOP_EPOCH = "slipstream.io/stop-epoch";
    /**
     * A token new with every stamp (annotation): a stamp is a change even when its epoch is the one the pod carries
     * already, so the fence policy judges every stamp, a stale leader's repeat of its own included.
     */
    static final String STOP_TOKEN = "slipstream.io/stop-token";
    /** The epoch of the leader that adopted a pod an older leader was stopping (its stop, still to come, is void). */
    static final String ADOPTED_EPOCH = "slipstream.io/adopted-epoch";

    /** The full run id (the label holds a shortened one when the id is long). */
    static final String RUN_ID_ANNOTATION = "slipstream.io/run-id";
    /**
     * A pod's instance by name ({@code worker-1}), which is its slot: an elastic run's metadata ranks its members densely,
     * so a pod is matched to its entry by this, never by its rank.
     */
    static final String INSTANCE_ANNOTATION = "slipstream.io/instance";
    /** The preemption notice, as JSON; the pod sees it as a file through the downward API. */
    static final String NOTICE_ANNOTATION = "slipstream.io/preemption-notice";

    private static final int KEY_LENGTH = 50;
    private static final Pattern DNS_LABEL = Pattern.compile("[a-z]([-a-z0-9]{0,61}[a-z0-9])?");
    private static final Pattern LABEL_VALUE = Pattern.compile("([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?");

    private Names() {
    }

    /** A run's key: its id, or for a long id its start and a hash of all of it (at most 50 characters). */
    static String runKey(RunId runId) {
        return key(runId.value());
    }

    /** The headless service of a run, and the pods' subdomain. */
    static String service(RunId runId) {
        return "ss-" + runKey(runId);
    }

    static String networkPolicy(RunId runId) {
        return "ss-" + runKey(runId);
    }

    /** The pod of an instance's first launch. */
    static String pod(InstanceId id) {
        return "ss-" + runKey(id.runId()) + "-" + id.attempt() + "-" + id.rank();
    }

    /**
     * The pod of an instance's launch {@code restart} (a restart in place): a name of its own, so that the new pod is
     * made while the ended one is still there, and nothing of the ended one (its status, its log) is read as the new
     * one's. Its DNS name is the instance's as before: that comes from the pod's hostname and subdomain, not its name.
     */
    static String pod(InstanceId id, int restart) {
        return restart == 0 ? pod(id) : pod(id) + "-r" + restart;
    }

    /** The config map with the metadata of one attempt of a run. */
    static String metadata(RunId runId, int attempt) {
        return "ss-" + runKey(runId) + "-" + attempt + "-metadata";
    }

    /** The secret with the token of one attempt of a run. */
    static String token(RunId runId, int attempt) {
        return "ss-" + runKey(runId) + "-" + attempt + "-token";
    }

    /** The claim with a run's checkpoints, shared directory and run-scoped storage. */
    static String runClaim(RunId runId) {
        return "ss-" + runKey(runId) + "-run";
    }

    static String jobClaim(String workspace, String job) {
        return "ss-job-" + key(workspace + "-" + job);
    }

    static String workspaceClaim(String workspace) {
        return "ss-ws-" + key(workspace);
    }

    /** An instance's host name: its name (as in {@code worker-1}) where that is a DNS label, else {@code rank-N}. */
    static String hostname(String name, int rank) {
        return DNS_LABEL.matcher(name).matches() ? name : "rank-" + rank;
    }

    /** A label value for free text (a workspace, a node group): as it is where allowed, else shortened and hashed. */
    static String labelValue(String text) {
        return LABEL_VALUE.matcher(text).matches() ? text : key(text);
    }

    /** The labels every object of a run carries. */
    static Map<String, String> runLabels(RunId runId) {
        Map<String, String> labels = new LinkedHashMap<>();
        labels.put(MANAGED_BY, MANAGER);
        labels.put(RUN, runKey(runId));
        return labels;
    }

    private static String key(String text) {
        String cleaned = text.toLowerCase(java.util.Locale.ROOT).replaceAll("[^a-z0-9-]", "-");
        if (cleaned.equals(text) && text.length() <= KEY_LENGTH && !text.startsWith("-") && !text.endsWith("-")) {
            return text;
        }
        String hash = HexFormat.of().formatHex(sha256(text)).substring(0, 8);
        String start = cleaned.substring(0, Math.min(cleaned.length(), KEY_LENGTH - 9)).replaceAll("^-+|-+$", "");
        return start.isEmpty() ? hash : start + "-" + hash;
    }

    private static byte[] sha256(String text) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
