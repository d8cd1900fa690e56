package io.slipstream.executor.kubernetes;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.MixedOperation;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.slipstream.api.codec.Json;
import io.slipstream.api.run.ClusterMetadata;
import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.RunId;
import io.slipstream.executor.LaunchSpec;
import java.util.List;
import java.util.Map;

/**
 * The objects a run's pods need beside themselves: per run its headless service, network policy and storage claims,
 * per attempt its Secret (the metadata config map is {@link AttemptMetadata}'s). Each is made by the first launch that
 * needs it, and a launch repeated makes nothing twice; all of them carry the run's label, by which they are deleted
 * when the run is forgotten.
 */
final class RunObjects {
    private final KubernetesClient client;
    private final Manifests manifests;
    private final PodDeletion deletion;
    /** A digest of the identity tokens last written to each attempt's Secret (the run's latest attempt only). */
    private final Map<AttemptKey, String> identityWritten = new java.util.HashMap<>();

    private record AttemptKey(String namespace, RunId runId, int attempt) {
    }

    RunObjects(KubernetesClient client, Manifests manifests, PodDeletion deletion) {
        this.client = client;
        this.manifests = manifests;
        this.deletion = deletion;
    }

    /** The run's service, network policy and storage claims: made once per run, kept until it is forgotten. */
    void ensureRunObjects(RunId runId, ClusterMetadata metadata, String namespace) {
        createIfAbsent(client, manifests.service(runId, namespace));
        createIfAbsent(client, manifests.networkPolicy(runId, namespace));
        manifests.claims(runId, metadata, namespace).forEach(claim -> createIfAbsent(client, claim));
    }

    /**
     * The first launch of an attempt makes its Secret; a later one (a node group that starts after another) adds the
     * values of the Secrets it refers to, if the others did not.
     */
    void ensureAttemptSecret(String namespace, LaunchSpec spec, String token) {
        InstanceId id = spec.id();
        Secret secret = manifests.attemptSecret(id.runId(), id.attempt(), namespace, token, spec);
        try {
            client.resource(secret).inNamespace(namespace).create();
        } catch (KubernetesClientException e) {
            if (e.getCode() != 409) {
                throw e;
            }
            Map<String, String> values = Manifests.secretData(spec);
            if (!values.isEmpty()) {
                var patch = Json.mapper().createObjectNode();
                var data = patch.putObject("data");
                values.forEach(data::put);
                // A merge patch of the data alone: it adds these keys and leaves the others (the token) as they are.
                client.secrets().inNamespace(namespace).resource(secret).patch(PatchContext.of(PatchType.JSON_MERGE), patch.toString());
            }
        }
    }

    /**
     * Puts new identity tokens into the attempt's Secret, from which the kubelet updates every pod's mounted files of
     * them (within its sync period, about a minute). A refresh hands the same tokens to every instance of the attempt:
     * the Secret is written once for them, not once per pod (only a digest of the last ones written is kept).
     */
    void refreshIdentity(String namespace, InstanceId id, List<io.slipstream.executor.IdentityToken> tokens) {
        String name = Names.token(id.runId(), id.attempt());
        AttemptKey key = new AttemptKey(namespace, id.runId(), id.attempt());
        String digest = digest(tokens);
        synchronized (identityWritten) {
            if (digest.equals(identityWritten.get(key))) {
                return;
            }
        }
        var patch = Json.mapper().createObjectNode();
        var data = patch.putObject("data");
        Manifests.identityData(tokens).forEach(data::put);
        // A merge patch of these keys alone: the run's token and its Secrets' values stay as they are.
        Secret secret = new io.fabric8.kubernetes.api.model.SecretBuilder().withNewMetadata().withName(name).withNamespace(namespace).endMetadata().build();
        client.secrets().inNamespace(namespace).resource(secret).patch(PatchContext.of(PatchType.JSON_MERGE), patch.toString());
        synchronized (identityWritten) {
            // One entry per attempt: the previous attempt's is of no use any more.
            identityWritten.keySet().removeIf(k -> k.namespace().equals(namespace) && k.runId().equals(id.runId()) && k.attempt() != id.attempt());
            identityWritten.put(key, digest);
        }
    }

    private static String digest(List<io.slipstream.executor.IdentityToken> tokens) {
        try {
            java.security.MessageDigest sha = java.security.MessageDigest.getInstance("SHA-256");
            for (io.slipstream.executor.IdentityToken token : tokens) {
                sha.update(token.token().reveal().getBytes(java.nio.charset.StandardCharsets.UTF_8));
                sha.update((byte) 0);
            }
            return java.util.HexFormat.of().formatHex(sha.digest());
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }

    /** Deletes the run's pods (through the fence) and every other object of the run in the namespace. */
    void deleteAll(RunId runId, String namespace) {
        String run = Names.runKey(runId);
        // One by one rather than by collection: the executor needs no deletecollection permission.
        for (Pod pod : client.pods().inNamespace(namespace).withLabel(Names.RUN, run).list().getItems()) {
            deletion.delete(namespace, pod.getMetadata().getName(), null, null);
        }
        deleteEach(client.services().inNamespace(namespace).withLabel(Names.RUN, run).list().getItems(), client.services());
        deleteEach(client.configMaps().inNamespace(namespace).withLabel(Names.RUN, run).list().getItems(), client.configMaps());
        deleteEach(client.network().networkPolicies().inNamespace(namespace).withLabel(Names.RUN, run).list().getItems(),
                client.network().networkPolicies());
        deleteEach(client.secrets().inNamespace(namespace).withLabel(Names.RUN, run).list().getItems(), client.secrets());
        synchronized (identityWritten) {
            identityWritten.keySet().removeIf(key -> key.namespace().equals(namespace) && key.runId().equals(runId));
        }
        // Only the run's own claim carries its label: job and workspace claims stay.
        deleteEach(client.persistentVolumeClaims().inNamespace(namespace).withLabel(Names.RUN, run).list().getItems(),
                client.persistentVolumeClaims());
    }

    /** Creates the object unless it exists: a conflict means an earlier launch (or a control plane before a restart) made it. */
    static void createIfAbsent(KubernetesClient client, HasMetadata object) {
        try {
            client.resource(object).inNamespace(object.getMetadata().getNamespace()).create();
        } catch (KubernetesClientException e) {
            if (e.getCode() != 409) {
                throw e;
            }
        }
    }

    private static <T extends HasMetadata> void deleteEach(List<T> objects, MixedOperation<T, ?, ? extends Resource<T>> operation) {
        for (T object : objects) {
            operation.inNamespace(object.getMetadata().getNamespace()).withName(object.getMetadata().getName()).delete();
        }
    }
}
