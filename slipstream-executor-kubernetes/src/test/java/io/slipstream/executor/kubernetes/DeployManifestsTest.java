package io.slipstream.executor.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Namespaced;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Probe;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.ServicePort;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.fabric8.kubernetes.api.model.rbac.RoleRef;
import io.fabric8.kubernetes.api.model.rbac.Subject;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.slipstream.api.codec.DocumentParser;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.assertj.core.groups.Tuple;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

/**
 * Keeps {@code deploy/kubernetes} valid: every document is a Kubernetes object the client's model knows, without
 * unknown fields; the RBAC rules are exactly {@link KubernetesPermissions}; and the pieces refer to each other
 * correctly (service account, config secret, database service, password, namespaces, selectors).
 */
class DeployManifestsTest {
    private static final Path DEPLOY = Path.of("..", "deploy", "kubernetes");
    private static final List<String> FILES = List.of("rbac.yaml", "postgres.yaml", "slipstream.yaml", "fence-policy.yaml");
    private static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();
    private static final String MODEL_PACKAGE = "io.fabric8.kubernetes.api.model";
    private static final String CONFIG_FILE = "server.yaml";

    /** Every document of a manifest, as the client's typed model. */
    private static List<HasMetadata> load(String file) {
        Object parsed;
        try (InputStream in = Files.newInputStream(DEPLOY.resolve(file))) {
            parsed = SERIALIZATION.unmarshal(in);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        // One document comes back as itself, several as a list.
        Collection<?> documents = parsed instanceof Collection<?> list ? list : List.of(parsed);
        List<HasMetadata> resources = new ArrayList<>();
        for (Object document : documents) {
            assertThat(document).as("a document of %s", file).isInstanceOf(HasMetadata.class);
            resources.add((HasMetadata) document);
        }
        return resources;
    }

    private static List<HasMetadata> all() {
        List<HasMetadata> resources = new ArrayList<>();
        FILES.forEach(file -> resources.addAll(load(file)));
        return resources;
    }

    private static <T extends HasMetadata> T one(String file, Class<T> type, String name) {
        List<T> found = load(file).stream().filter(type::isInstance).map(type::cast)
                .filter(r -> r.getMetadata().getName().equals(name)).toList();
        assertThat(found).as("%s %s in %s", type.getSimpleName(), name, file).hasSize(1);
        return found.get(0);
    }

    private static <T extends HasMetadata> T only(String file, Class<T> type) {
        List<T> found = load(file).stream().filter(type::isInstance).map(type::cast).toList();
        assertThat(found).as("the %s of %s", type.getSimpleName(), file).hasSize(1);
        return found.get(0);
    }

    /** The server's config file, from the Secret the Deployment mounts. */
    private static JsonNode serverConfig() {
        Secret secret = one("slipstream.yaml", Secret.class, "slipstream-config");
        assertThat(secret.getStringData()).containsKey(CONFIG_FILE);
        return DocumentParser.parseOne(secret.getStringData().get(CONFIG_FILE).getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void everyDocumentIsAKnownKubernetesObjectWithItsNameAndNamespace() {
        for (String file : FILES) {
            List<HasMetadata> resources = load(file);
            assertThat(resources).as(file).isNotEmpty();
            for (HasMetadata resource : resources) {
                String what = file + ": " + resource.getKind() + " " + (resource.getMetadata() == null ? "?" : resource.getMetadata().getName());
                assertThat(resource).as(what + " is of a kind the model knows").isNotInstanceOf(GenericKubernetesResource.class);
                assertThat(resource.getApiVersion()).as(what).isNotBlank();
                assertThat(resource.getKind()).as(what).isNotBlank();
                assertThat(resource.getMetadata()).as(what).isNotNull();
                assertThat(resource.getMetadata().getName()).as(what).isNotBlank();
                if (resource instanceof Namespaced) {
                    assertThat(resource.getMetadata().getNamespace()).as(what + " names its namespace").isNotBlank();
                } else {
                    assertThat(resource.getMetadata().getNamespace()).as(what + " is cluster-scoped").isNull();
                }
                assertNoUnknownFields(resource, what, 0);
            }
        }
    }

    @Test
    void noObjectIsDeclaredTwiceAndEveryNamespaceIsCreated() {
        Set<String> namespaces = new TreeSet<>();
        load("slipstream.yaml").stream().filter(Namespace.class::isInstance).forEach(ns -> namespaces.add(ns.getMetadata().getName()));
        assertThat(namespaces).contains("slipstream", KubernetesConfig.DEFAULT_NAMESPACE);
        Set<String> seen = new HashSet<>();
        for (HasMetadata resource : all()) {
            String key = resource.getKind() + " " + resource.getMetadata().getNamespace() + "/" + resource.getMetadata().getName();
            assertThat(seen.add(key)).as(key + " is declared once").isTrue();
            if (resource.getMetadata().getNamespace() != null) {
                assertThat(namespaces).as(key + ": its namespace is created by slipstream.yaml").contains(resource.getMetadata().getNamespace());
            }
        }
    }

    @Test
    void theRoleGrantsExactlyTheNamespacedPermissions() {
        Role role = one("rbac.yaml", Role.class, "slipstream-executor");
        assertThat(role.getMetadata().getNamespace()).isEqualTo(serverConfig().path("kubernetes").path("namespace").asString());
        assertThat(grants(role.getRules())).isEqualTo(grantsOf(KubernetesPermissions.NAMESPACED));
    }

    @Test
    void theFencePolicyReadsTheEpochConfigMapOfTheServersJobsNamespace() {
        var binding = only("fence-policy.yaml", io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicyBinding.class);
        assertThat(binding.getSpec().getParamRef().getNamespace()).isEqualTo(serverConfig().path("kubernetes").path("namespace").asString());
        assertThat(binding.getSpec().getParamRef().getName()).isEqualTo(KubernetesFence.NAME);
        assertThat(binding.getSpec().getMatchResources()).as("every namespace: workspaces may have their own").isNull();
    }

    @Test
    void theClusterRoleGrantsExactlyTheClusterPermissions() {
        ClusterRole role = one("rbac.yaml", ClusterRole.class, "slipstream-nodes");
        assertThat(role.getAggregationRule()).as("aggregation would add rules from elsewhere").isNull();
        assertThat(grants(role.getRules())).isEqualTo(grantsOf(KubernetesPermissions.CLUSTER));
    }

    @Test
    void theBindingsGiveBothRolesToTheServersServiceAccount() {
        ServiceAccount account = only("rbac.yaml", ServiceAccount.class);
        Tuple subject = tuple("ServiceAccount", account.getMetadata().getName(), account.getMetadata().getNamespace());

        ClusterRoleBinding clusterBinding = only("rbac.yaml", ClusterRoleBinding.class);
        assertThat(roleRef(clusterBinding.getRoleRef())).isEqualTo(tuple("rbac.authorization.k8s.io", "ClusterRole", "slipstream-nodes"));
        assertThat(clusterBinding.getSubjects()).extracting(Subject::getKind, Subject::getName, Subject::getNamespace).containsExactly(subject);

        Role role = one("rbac.yaml", Role.class, "slipstream-executor");
        RoleBinding binding = only("rbac.yaml", RoleBinding.class);
        assertThat(binding.getMetadata().getNamespace()).isEqualTo(role.getMetadata().getNamespace());
        assertThat(roleRef(binding.getRoleRef())).isEqualTo(tuple("rbac.authorization.k8s.io", "Role", role.getMetadata().getName()));
        assertThat(binding.getSubjects()).extracting(Subject::getKind, Subject::getName, Subject::getNamespace).containsExactly(subject);

        Deployment deployment = one("slipstream.yaml", Deployment.class, "slipstream");
        assertThat(deployment.getMetadata().getNamespace()).isEqualTo(account.getMetadata().getNamespace());
        assertThat(deployment.getSpec().getTemplate().getSpec().getServiceAccountName()).isEqualTo(account.getMetadata().getName());
        assertThat(deployment.getSpec().getTemplate().getSpec().getAutomountServiceAccountToken())
                .as("the executor authenticates with the service account's token").isNotEqualTo(Boolean.FALSE);
    }

    @Test
    void oneControlPlaneRunsTheServerWithTheMountedConfig() {
        Deployment deployment = one("slipstream.yaml", Deployment.class, "slipstream");
        assertThat(deployment.getSpec().getReplicas()).isEqualTo(1);
        assertThat(deployment.getSpec().getStrategy().getType()).isEqualTo("Recreate");

        PodSpec pod = deployment.getSpec().getTemplate().getSpec();
        assertThat(pod.getContainers()).hasSize(1);
        Container server = pod.getContainers().get(0);
        Volume config = pod.getVolumes().stream()
                .filter(v -> v.getSecret() != null && "slipstream-config".equals(v.getSecret().getSecretName()))
                .findFirst().orElseThrow(() -> new AssertionError("no volume of the slipstream-config secret"));
        VolumeMount mount = server.getVolumeMounts().stream().filter(m -> m.getName().equals(config.getName()))
                .findFirst().orElseThrow(() -> new AssertionError("the config volume is not mounted"));
        assertThat(server.getArgs()).as("starts the server with the mounted config")
                .startsWith("server")
                .containsSubsequence("--config", mount.getMountPath() + "/" + CONFIG_FILE);
        if (config.getSecret().getItems() != null && !config.getSecret().getItems().isEmpty()) {
            assertThat(config.getSecret().getItems()).anyMatch(item -> item.getKey().equals(CONFIG_FILE) && item.getPath().equals(CONFIG_FILE));
        }
        int dataDir = server.getArgs().indexOf("--data-dir");
        assertThat(dataDir).as("--data-dir is given").isNotNegative();
        assertThat(server.getVolumeMounts()).as("the data dir is a writable volume")
                .anyMatch(m -> m.getMountPath().equals(server.getArgs().get(dataDir + 1)) && !Boolean.TRUE.equals(m.getReadOnly()));

        JsonNode configFile = serverConfig();
        assertThat(configFile.path("executor").asString()).isEqualTo("kubernetes");
        assertThat(configFile.path("server").path("host").asString()).as("reachable from outside the pod").isEqualTo("0.0.0.0");
        assertThat(configFile.has("nodes")).as("nodes come from the cluster").isFalse();
        int port = configFile.path("server").path("port").asInt(8080);
        assertThat(server.getPorts()).anyMatch(p -> p.getContainerPort() == port);

        assertThat(server.getReadinessProbe()).as("readiness probe").isNotNull();
        assertThat(server.getLivenessProbe()).as("liveness probe").isNotNull();
        for (Probe probe : List.of(server.getReadinessProbe(), server.getLivenessProbe())) {
            assertThat(probe.getHttpGet().getPath()).as("the server's unauthenticated health route").isEqualTo("/healthz");
            assertThat(containerPort(server, probe.getHttpGet().getPort().getStrVal(), probe.getHttpGet().getPort().getIntVal())).isEqualTo(port);
        }
        assertThat(pod.getSecurityContext().getRunAsNonRoot()).isTrue();
        assertThat(server.getSecurityContext().getAllowPrivilegeEscalation()).isFalse();
        assertThat(server.getResources().getRequests()).containsKeys("cpu", "memory");
        assertThat(server.getResources().getLimits()).containsKey("memory");

        Service service = one("slipstream.yaml", Service.class, "slipstream");
        assertSelects(service, deployment.getSpec().getTemplate().getMetadata().getLabels());
        assertThat(deployment.getSpec().getSelector().getMatchLabels()).isEqualTo(service.getSpec().getSelector());
        assertThat(service.getSpec().getPorts()).anyMatch(p -> p.getPort() == port
                && containerPort(server, p.getTargetPort().getStrVal(), p.getTargetPort().getIntVal()) == port);
    }

    @Test
    void theStoreIsTheDatabaseOfPostgresYaml() {
        JsonNode store = serverConfig().path("store");
        URI url = URI.create(store.path("url").asString().substring("jdbc:".length()));
        assertThat(url.getScheme()).isEqualTo("postgresql");

        Service service = one("postgres.yaml", Service.class, "slipstream-db");
        Deployment deployment = one("slipstream.yaml", Deployment.class, "slipstream");
        String namespace = service.getMetadata().getNamespace();
        String name = service.getMetadata().getName();
        if (namespace.equals(deployment.getMetadata().getNamespace())) {
            assertThat(url.getHost()).isIn(name, name + "." + namespace, name + "." + namespace + ".svc",
                    name + "." + namespace + ".svc.cluster.local");
        } else {
            assertThat(url.getHost()).startsWith(name + "." + namespace);
        }
        int port = url.getPort() == -1 ? 5432 : url.getPort();
        assertThat(service.getSpec().getPorts()).extracting(ServicePort::getPort).contains(port);

        StatefulSet database = one("postgres.yaml", StatefulSet.class, "slipstream-db");
        assertThat(database.getSpec().getServiceName()).isEqualTo(name);
        assertThat(database.getSpec().getReplicas()).isEqualTo(1);
        assertThat(database.getSpec().getVolumeClaimTemplates()).isNotEmpty();
        assertSelects(service, database.getSpec().getTemplate().getMetadata().getLabels());
        Container postgres = database.getSpec().getTemplate().getSpec().getContainers().get(0);
        assertThat(postgres.getImage()).startsWith("postgres:16");
        assertThat(url.getPath()).isEqualTo("/" + env(postgres, "POSTGRES_DB").getValue());
        assertThat(store.path("username").asString()).isEqualTo(env(postgres, "POSTGRES_USER").getValue());

        // The password is in two places (the database's Secret and the server's config): they must agree.
        EnvVar password = env(postgres, "POSTGRES_PASSWORD");
        assertThat(password.getValueFrom()).as("the database password comes from a Secret").isNotNull();
        Secret secret = one("postgres.yaml", Secret.class, password.getValueFrom().getSecretKeyRef().getName());
        assertThat(secret.getStringData()).containsEntry(password.getValueFrom().getSecretKeyRef().getKey(), store.path("password").asString());
    }

    // ---------------------------------------------------------------------------------------------------------------

    /** RBAC rules as {group, resource} to verbs, merged (rules add up); no resource names, URLs or wildcards. */
    private static Map<String, Set<String>> grants(List<PolicyRule> rules) {
        Map<String, Set<String>> grants = new TreeMap<>();
        for (PolicyRule rule : rules) {
            assertThat(rule.getNonResourceURLs()).as("non-resource URLs").isNullOrEmpty();
            assertThat(rule.getResourceNames()).as("resource names").isNullOrEmpty();
            assertThat(rule.getApiGroups()).isNotEmpty().doesNotContain("*");
            assertThat(rule.getResources()).isNotEmpty().doesNotContain("*");
            assertThat(rule.getVerbs()).isNotEmpty().doesNotContain("*");
            for (String group : rule.getApiGroups()) {
                for (String resource : rule.getResources()) {
                    grants.computeIfAbsent(key(group, resource), k -> new TreeSet<>()).addAll(rule.getVerbs());
                }
            }
        }
        return grants;
    }

    private static Map<String, Set<String>> grantsOf(List<KubernetesPermissions.Rule> rules) {
        Map<String, Set<String>> grants = new TreeMap<>();
        rules.forEach(rule -> grants.computeIfAbsent(key(rule.apiGroup(), rule.resource()), k -> new TreeSet<>()).addAll(rule.verbs()));
        return grants;
    }

    private static String key(String group, String resource) {
        return (group.isEmpty() ? "core" : group) + ": " + resource;
    }

    private static Tuple roleRef(RoleRef ref) {
        return tuple(ref.getApiGroup(), ref.getKind(), ref.getName());
    }

    private static void assertSelects(Service service, Map<String, String> podLabels) {
        assertThat(service.getSpec().getSelector()).as("the selector of Service " + service.getMetadata().getName()).isNotEmpty();
        assertThat(podLabels).as("the pods of Service " + service.getMetadata().getName()).containsAllEntriesOf(service.getSpec().getSelector());
    }

    private static int containerPort(Container container, String name, Integer number) {
        if (name == null) {
            return Objects.requireNonNull(number);
        }
        return container.getPorts().stream().filter(p -> name.equals(p.getName())).findFirst()
                .orElseThrow(() -> new AssertionError("no container port named " + name)).getContainerPort();
    }

    private static EnvVar env(Container container, String name) {
        return container.getEnv().stream().filter(e -> e.getName().equals(name)).findFirst()
                .orElseThrow(() -> new AssertionError(container.getName() + " has no " + name));
    }

    /**
     * The model keeps fields it does not know in {@code additionalProperties} instead of failing: a misspelled field
     * would pass unnoticed (and be refused by the API server only at apply time). Walks every model object's getters.
     */
    private static void assertNoUnknownFields(Object value, String path, int depth) {
        assertThat(depth).as("nesting at " + path).isLessThan(64);
        if (value instanceof Collection<?> items) {
            int i = 0;
            for (Object item : items) {
                assertNoUnknownFields(item, path + "[" + i++ + "]", depth + 1);
            }
            return;
        }
        if (value instanceof Map<?, ?> map) {
            map.forEach((k, v) -> assertNoUnknownFields(v, path + "." + k, depth + 1));
            return;
        }
        if (value == null || !value.getClass().getName().startsWith(MODEL_PACKAGE)) {
            return;
        }
        for (Method getter : value.getClass().getMethods()) {
            if (!getter.getName().startsWith("get") || getter.getParameterCount() != 0 || Modifier.isStatic(getter.getModifiers())
                    || getter.getDeclaringClass().isInterface() || !getter.getDeclaringClass().getName().startsWith(MODEL_PACKAGE)) {
                continue;
            }
            Object field;
            try {
                field = getter.invoke(value);
            } catch (IllegalAccessException | InvocationTargetException e) {
                throw new AssertionError(path + ": " + getter.getName() + " failed", e instanceof InvocationTargetException t ? t.getCause() : e);
            }
            if (getter.getName().equals("getAdditionalProperties")) {
                assertThat((Map<?, ?>) field).as("unknown fields at " + path).isNullOrEmpty();
            } else {
                assertNoUnknownFields(field, path + "." + getter.getName().substring(3), depth + 1);
            }
        }
    }
}
