package io.slipstream.executor.kubernetes;

import java.util.List;

/**
 * Everything the executor does to the Kubernetes API, as RBAC rules: the least privileges it needs. The RBAC manifest
 * in {@code deploy/kubernetes} is checked against this list by a test, so the two cannot drift apart.
 */
public final class KubernetesPermissions {
    /** One RBAC rule: verbs on a resource of an API group ({@code ""} is the core group). */
    public record Rule(String apiGroup, String resource, List<String> verbs) {
        public Rule {
            verbs = List.copyOf(verbs);
        }
    }

    /** Cluster-wide: the nodes Slipstream places instances on (watched, never changed). */
    public static final List<Rule> CLUSTER = List.of(
            new Rule("", "nodes", List.of("list", "watch")));

    /** In the namespace instances run in. */
    public static final List<Rule> NAMESPACED = List.of(
            new Rule("", "pods", List.of("get", "list", "watch", "create", "patch", "delete")),
            new Rule("", "pods/log", List.of("get")),
            new Rule("", "services", List.of("list", "create", "delete")),
            new Rule("", "configmaps", List.of("get", "list", "create", "update", "delete")),
            new Rule("", "secrets", List.of("list", "create", "patch", "delete")),
            new Rule("", "persistentvolumeclaims", List.of("list", "create", "delete")),
            new Rule("networking.k8s.io", "networkpolicies", List.of("list", "create", "delete")));

    /** Whether the rules allow {@code verb} on {@code resource} of {@code apiGroup}. */
    public static boolean allows(String apiGroup, String resource, String verb) {
        return java.util.stream.Stream.concat(CLUSTER.stream(), NAMESPACED.stream())
                .anyMatch(rule -> rule.apiGroup().equals(apiGroup) && rule.resource().equals(resource) && rule.verbs().contains(verb));
    }

    private KubernetesPermissions() {
    }
}
