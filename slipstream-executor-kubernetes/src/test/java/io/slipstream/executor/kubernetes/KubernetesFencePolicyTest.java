package io.slipstream.executor.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.executor.kubernetes.FencePolicy.Decision;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The CEL of the leader fence's admission policy ({@code deploy/kubernetes/fence-policy.yaml}), compiled and
 * evaluated with cel-java against pods and the epoch ConfigMap: what the API server will let through.
 */
@SuppressWarnings("unchecked")
class KubernetesFencePolicyTest {
    private static final FencePolicy POLICY = FencePolicy.load();
    private static final String ALLOWED = "allowed";
    private static final String SKIPPED = "not matched";
    private static final String DENIED = "denied";

    /** A pod's labels: Slipstream's, with the epoch label given (null: none) and more. */
    private static Map<String, Object> pod(Map<String, String> labels) {
        return Map.of("apiVersion", "v1", "kind", "Pod", "metadata", Map.of("name", "ss-r-1-0", "namespace", "slipstream-jobs", "labels", labels),
                "spec", Map.of("nodeName", "gpu-node-1", "containers", List.of(Map.of("name", "main", "image", "trainer:1"))));
    }

    private static Map<String, String> ours(String... keysAndValues) {
        Map<String, String> labels = new LinkedHashMap<>();
        labels.put(Names.MANAGED_BY, Names.MANAGER);
        labels.put(Names.RUN, "r");
        for (int i = 0; i < keysAndValues.length; i += 2) {
            labels.put(keysAndValues[i], keysAndValues[i + 1]);
        }
        return labels;
    }

    private static Map<String, String> theirs(String... keysAndValues) {
        Map<String, String> labels = ours(keysAndValues);
        labels.remove(Names.MANAGED_BY);
        labels.put("app.kubernetes.io/name", "someone-else");
        return labels;
    }

    /** The ConfigMap as the fence writes it. */
    private static Map<String, Object> fence(String epoch) {
        Map<String, Object> map = new LinkedHashMap<>(Map.of("apiVersion", "v1", "kind", "ConfigMap",
                "metadata", Map.of("name", KubernetesFence.NAME, "namespace", "slipstream-jobs")));
        if (epoch != null) {
            map.put("data", Map.of("epoch", epoch));
        }
        return map;
    }

    static Stream<Arguments> creates() {
        return Stream.of(
                Arguments.of("the fence's own epoch", ours(Names.EPOCH, "5"), fence("5"), ALLOWED),
                Arguments.of("a newer epoch (a leader that fenced after the map was read)", ours(Names.EPOCH, "6"), fence("5"), ALLOWED),
                Arguments.of("an older epoch: a stale leader", ours(Names.EPOCH, "4"), fence("5"), DENIED),
                Arguments.of("much older, many digits", ours(Names.EPOCH, "999999999"), fence("1000000000"), DENIED),
                Arguments.of("no epoch label", ours(), fence("5"), DENIED),
                Arguments.of("no epoch label, no epoch written yet", ours(), fence(null), DENIED),
                Arguments.of("epoch 0 before any fence wrote one", ours(Names.EPOCH, "0"), fence(null), ALLOWED),
                Arguments.of("an epoch that is no number", ours(Names.EPOCH, "five"), fence("5"), DENIED),
                Arguments.of("a fence that is no number", ours(Names.EPOCH, "5"), fence("five"), DENIED),
                Arguments.of("no ConfigMap at all", ours(Names.EPOCH, "5"), null, DENIED),
                Arguments.of("not Slipstream's pod, no epoch", theirs(), fence("5"), SKIPPED),
                Arguments.of("not Slipstream's pod, an older epoch", theirs(Names.EPOCH, "1"), fence("5"), SKIPPED),
                Arguments.of("another manager's pod", ours(Names.MANAGED_BY, "helm", Names.EPOCH, "1"), fence("5"), SKIPPED),
                Arguments.of("not Slipstream's pod, no ConfigMap", theirs(), null, SKIPPED));
    }

    @ParameterizedTest(name = "create: {0}")
    @MethodSource("creates")
    void aCreateNeedsAnEpochAtLeastTheFences(String what, Map<String, String> labels, Map<String, Object> params, String expected) {
        assertThat(outcome(POLICY.admit("CREATE", pod(labels), null, params))).as(what).isEqualTo(expected);
    }

    @Test
    void aRefusedCreateSaysWhichEpochsAndWhy() {
        Decision decision = POLICY.admit("CREATE", pod(ours(Names.EPOCH, "4")), null, fence("5"));
        assertThat(decision).isInstanceOfSatisfying(Decision.Denied.class, denied -> assertThat(denied.message())
                .isEqualTo("fenced: this pod is of leader epoch 4, but epoch 5 leads (ConfigMap slipstream-leader-epoch): a replica that lost "
                        + "its lease creates nothing"));
        assertThat(POLICY.admit("CREATE", pod(ours()), null, fence("5"))).isInstanceOfSatisfying(Decision.Denied.class,
                denied -> assertThat(denied.message()).contains("leader epoch -1"));
    }

    static Stream<Arguments> updates() {
        return Stream.of(
                Arguments.of("stamping the fence's epoch", ours(Names.EPOCH, "3"), ours(Names.EPOCH, "3", Names.STOP_EPOCH, "5"), fence("5"), ALLOWED),
                Arguments.of("stamping a newer epoch", ours(Names.EPOCH, "3"), ours(Names.EPOCH, "3", Names.STOP_EPOCH, "6"), fence("5"), ALLOWED),
                Arguments.of("stamping an older epoch: a stale leader's stop", ours(Names.EPOCH, "3"),
                        ours(Names.EPOCH, "3", Names.STOP_EPOCH, "4"), fence("5"), DENIED),
                Arguments.of("stamping a pod made before pods had epochs", ours(), ours(Names.STOP_EPOCH, "5"), fence("5"), ALLOWED),
                Arguments.of("stamping over an older stamp", ours(Names.STOP_EPOCH, "4"), ours(Names.STOP_EPOCH, "5"), fence("5"), ALLOWED),
                Arguments.of("stamping an older epoch over the current stamp", ours(Names.STOP_EPOCH, "5"), ours(Names.STOP_EPOCH, "4"),
                        fence("5"), DENIED),
                Arguments.of("removing the stamp", ours(Names.STOP_EPOCH, "5"), ours(), fence("5"), DENIED),
                Arguments.of("a stamp that is no number", ours(), ours(Names.STOP_EPOCH, "latest"), fence("5"), DENIED),
                Arguments.of("not touching the stamp (a notice, the kubelet's finalizer)", ours(Names.EPOCH, "1"),
                        ours(Names.EPOCH, "1", "x", "y"), fence("5"), ALLOWED),
                Arguments.of("not touching an old stamp", ours(Names.EPOCH, "1", Names.STOP_EPOCH, "2"),
                        ours(Names.EPOCH, "1", Names.STOP_EPOCH, "2", "x", "y"), fence("5"), ALLOWED),
                Arguments.of("an update of a pod of an older epoch, without a stamp", ours(Names.EPOCH, "1"), ours(Names.EPOCH, "1"), fence("5"),
                        ALLOWED),
                Arguments.of("a stamp on a pod with no labels before", Map.of(), ours(Names.STOP_EPOCH, "5"), fence("5"), ALLOWED),
                Arguments.of("not Slipstream's pod, stamped older", theirs(), theirs(Names.STOP_EPOCH, "1"), fence("5"), SKIPPED),
                Arguments.of("a stamp, and no ConfigMap", ours(), ours(Names.STOP_EPOCH, "5"), null, DENIED));
    }

    @ParameterizedTest(name = "update: {0}")
    @MethodSource("updates")
    void aStopStampNeedsAnEpochAtLeastTheFences(String what, Map<String, String> before, Map<String, String> after, Map<String, Object> params,
            String expected) {
        assertThat(outcome(POLICY.admit("UPDATE", pod(after), pod(before), params))).as(what).isEqualTo(expected);
    }

    /** A pod stamped {@code stopEpoch} with stop token {@code token} (null: none). */
    private static Map<String, Object> stamped(String stopEpoch, String token) {
        Map<String, Object> pod = new LinkedHashMap<>(pod(ours(Names.EPOCH, "3", Names.STOP_EPOCH, stopEpoch)));
        Map<String, Object> metadata = new LinkedHashMap<>((Map<String, Object>) pod.get("metadata"));
        if (token != null) {
            metadata.put("annotations", Map.of(Names.STOP_TOKEN, token));
        }
        pod.put("metadata", metadata);
        return pod;
    }

    static Stream<Arguments> restamps() {
        return Stream.of(
                Arguments.of("a stale leader repeating the stamp it made while it led", stamped("4", "a"), stamped("4", "b"), DENIED),
                Arguments.of("a stale leader repeating a stamp of before tokens", stamped("4", null), stamped("4", "b"), DENIED),
                Arguments.of("a stale leader removing the token", stamped("4", "a"), stamped("4", null), DENIED),
                Arguments.of("the leader repeating its own stamp", stamped("5", "a"), stamped("5", "b"), ALLOWED),
                Arguments.of("anyone else's update of a stamped pod (stamp and token as they were)", stamped("4", "a"), stamped("4", "a"), ALLOWED));
    }

    @ParameterizedTest(name = "restamp: {0}")
    @MethodSource("restamps")
    void everyStampIsJudgedEvenOneOfTheEpochThePodCarries(String what, Map<String, Object> before, Map<String, Object> after, String expected) {
        assertThat(outcome(POLICY.admit("UPDATE", after, before, fence("5")))).as(what).isEqualTo(expected);
    }

    @Test
    void aRefusedStampSaysWhichEpochsAndWhy() {
        Decision decision = POLICY.admit("UPDATE", pod(ours(Names.STOP_EPOCH, "4")), pod(ours()), fence("5"));
        assertThat(decision).isInstanceOfSatisfying(Decision.Denied.class, denied -> assertThat(denied.message())
                .isEqualTo("fenced: this stop is of leader epoch 4, but epoch 5 leads (ConfigMap slipstream-leader-epoch): a replica that lost "
                        + "its lease stops nothing"));
        assertThat(POLICY.admit("UPDATE", pod(ours()), pod(ours(Names.STOP_EPOCH, "5")), fence("5")))
                .isInstanceOfSatisfying(Decision.Denied.class, denied -> assertThat(denied.message()).contains("leader epoch none"));
    }

    @Test
    void deletesAndOtherOperationsAreNotMatched() {
        // A DELETE has no object: it is fenced by the stamp its resourceVersion precondition needs.
        assertThat(outcome(POLICY.admit("DELETE", null, pod(ours(Names.EPOCH, "1")), fence("5")))).isEqualTo(SKIPPED);
        assertThat(outcome(POLICY.admit("CONNECT", pod(ours(Names.EPOCH, "1")), null, fence("5")))).isEqualTo(SKIPPED);
    }

    @Test
    void thePolicyFailsClosedOnPodsWithTheJobsNamespacesConfigMapAsItsParameter() {
        assertThat(POLICY.policy.getMetadata().getName()).as("the executor knows its refusals by it").isEqualTo(KubernetesFence.POLICY);
        var spec = POLICY.policy.getSpec();
        assertThat(spec.getFailurePolicy()).isEqualTo("Fail");
        assertThat(spec.getParamKind().getApiVersion()).isEqualTo("v1");
        assertThat(spec.getParamKind().getKind()).isEqualTo("ConfigMap");
        assertThat(spec.getMatchConstraints().getResourceRules()).singleElement().satisfies(rule -> {
            assertThat(rule.getApiGroups()).containsExactly("");
            assertThat(rule.getResources()).containsExactly("pods");
            assertThat(rule.getOperations()).containsExactlyInAnyOrder("CREATE", "UPDATE");
        });
        assertThat(spec.getValidations()).allSatisfy(v -> assertThat(v.getReason()).isEqualTo("Forbidden"));

        var binding = POLICY.binding.getSpec();
        assertThat(binding.getPolicyName()).isEqualTo(POLICY.policy.getMetadata().getName());
        assertThat(binding.getValidationActions()).containsExactly("Deny");
        assertThat(binding.getParamRef().getName()).isEqualTo(KubernetesFence.NAME);
        assertThat(binding.getParamRef().getNamespace()).isEqualTo(KubernetesConfig.DEFAULT_NAMESPACE);
        assertThat(binding.getParamRef().getSelector()).as("one ConfigMap, by name").isNull();
        assertThat(binding.getParamRef().getParameterNotFoundAction()).isEqualTo("Deny");
    }

    private static String outcome(Decision decision) {
        if (decision instanceof Decision.Allowed allowed) {
            return allowed.matched() ? ALLOWED : SKIPPED;
        }
        return DENIED;
    }
}
