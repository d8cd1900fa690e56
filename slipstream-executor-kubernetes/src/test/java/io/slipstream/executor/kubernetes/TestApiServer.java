package io.slipstream.executor.kubernetes;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.fabric8.mockwebserver.http.Response;
import io.fabric8.mockwebserver.http.WebSocket;
import io.fabric8.mockwebserver.http.WebSocketListener;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * fabric8's mock API server in CRUD mode, with what a real API server does that the mock lacks and the executor
 * relies on: pod logs (served by the {@link TestKubelet}), the grace period of a pod's deletion (the kubelet
 * reads it; the mock keeps a deleted pod while the kubelet's finalizer is on it, as a real server keeps a pod until
 * its kubelet confirms that its containers are dead), a pod deletion's resourceVersion precondition, and, once
 * {@link #installFencePolicy installed}, the leader fence's admission policy of {@code deploy/kubernetes}.
 */
public final class TestApiServer implements AutoCloseable {
    private static final Pattern POD_LOG = Pattern.compile("/api/v1/namespaces/([^/]+)/pods/([^/?]+)/log(\\?.*)?");
    private static final Pattern POD = Pattern.compile("/api/v1/namespaces/([^/]+)/pods/([^/?]+)(\\?.*)?");
    private static final Pattern GRACE = Pattern.compile("\"gracePeriodSeconds\"\\s*:\\s*(\\d+)");
    private static final Pattern PODS = Pattern.compile("/api/v1/namespaces/([^/]+)/pods(\\?.*)?");
    private static final Pattern FENCE = Pattern.compile("/api/v1/namespaces/([^/]+)/configmaps/" + KubernetesFence.NAME + "(\\?.*)?");
    private static final io.fabric8.kubernetes.client.utils.KubernetesSerialization JSON = new io.fabric8.kubernetes.client.utils.KubernetesSerialization();

    /** The user agent of the executor's client: its requests are checked against the RBAC rules it ships with. */
    public static final String EXECUTOR_AGENT = "slipstream-executor-under-test";
    /** The mock logs every request at INFO through java.util.logging; kept here so the level sticks. */
    private static final java.util.logging.Logger MOCK_LOG = java.util.logging.Logger.getLogger("io.fabric8.mockwebserver");

    static {
        MOCK_LOG.setLevel(java.util.logging.Level.WARNING);
    }

    private final KubernetesMockServer server;
    private final java.util.Set<String> executorRequests = ConcurrentHashMap.newKeySet();
    private final Map<String, Long> deletionGrace = new ConcurrentHashMap<>();
    private final java.util.List<String> podWrites = new java.util.concurrent.CopyOnWriteArrayList<>();
    private volatile FencePolicy fencePolicy;
    private volatile String staleFence;
    private final java.util.concurrent.atomic.AtomicInteger staleFenceReads = new java.util.concurrent.atomic.AtomicInteger();
    private final java.util.concurrent.atomic.AtomicInteger conflictingDeletes = new java.util.concurrent.atomic.AtomicInteger();
    private volatile TestKubelet kubelet;

    TestApiServer() {
        server = new KubernetesMockServer(new Context(), new MockWebServer(), new HashMap<>(), new Dispatcher(), false);
        server.init();
    }

    void serveLogsFrom(TestKubelet kubelet) {
        this.kubelet = kubelet;
    }

    KubernetesClient newClient() {
        return server.createClient();
    }

    /** The grace period the pod's deletion asked for ({@code null}: not deleted, or the pod's default). */
    Long deletionGrace(String namespace, String pod) {
        return deletionGrace.get(namespace + "/" + pod);
    }

    /** From now on the API server runs the fence policy of {@code deploy/kubernetes/fence-policy.yaml} on pods. */
    void installFencePolicy() {
        fencePolicy = FencePolicy.load();
    }

    /**
     * The executor's reads of the epoch ConfigMap answer {@code epoch}, whatever it holds: as if each read were made
     * just before a newer leader fenced (the window between the executor's check and its call).
     */
    void serveStaleFenceReads(long epoch) {
        staleFenceReads.set(Integer.MAX_VALUE);
        staleFence = Long.toString(epoch);
    }

    /** As {@link #serveStaleFenceReads(long)}, for the next {@code reads} reads only; later ones see the ConfigMap. */
    void serveStaleFenceReads(long epoch, int reads) {
        staleFenceReads.set(reads);
        staleFence = Long.toString(epoch);
    }

    /** The next {@code count} pod deletions with a precondition fail with 409, as if the pod changed meanwhile. */
    void conflictOnNextDeletes(int count) {
        conflictingDeletes.set(count);
    }

    /**
     * What the executor did to pods, in order: {@code CREATE ns/pod epoch=E}, {@code STAMP ns/pod stop-epoch=E
     * rv=R} (a patch that sets the stop stamp, with the resource version it gave the pod), {@code DELETE ns/pod rv=R
     * grace=G} (R: the precondition, G: the grace period; "-" when none), each followed by {@code -> CODE} when the
     * API server refused it.
     */
    java.util.List<String> podWrites() {
        return java.util.List.copyOf(podWrites);
    }

    private final class Dispatcher extends KubernetesCrudDispatcher {
        @Override
        public MockResponse dispatch(RecordedRequest request) {
            String path = request.getPath();
            boolean executor = EXECUTOR_AGENT.equals(request.getHeader("User-Agent"));
            if (executor) {
                executorRequests.add(rbacVerb(request.getMethod(), path) + " " + request.getMethod() + " " + path.replaceAll("\\?.*", ""));
            }
            Matcher log = POD_LOG.matcher(path);
            if ("GET".equals(request.getMethod()) && log.matches()) {
                return logOf(log.group(1), log.group(2), query(log.group(3)));
            }
            Matcher fence = FENCE.matcher(path);
            if (executor && staleFence != null && "GET".equals(request.getMethod()) && fence.matches()
                    && staleFenceReads.getAndUpdate(n -> n == Integer.MAX_VALUE ? n : Math.max(0, n - 1)) > 0) {
                return new MockResponse().setResponseCode(200).setBody(JSON.asJson(new io.fabric8.kubernetes.api.model.ConfigMapBuilder()
                        .withNewMetadata().withName(KubernetesFence.NAME).withNamespace(fence.group(1)).withResourceVersion("1").endMetadata()
                        .addToData("epoch", staleFence).build()));
            }
            Matcher pod = POD.matcher(path);
            Matcher pods = PODS.matcher(path);
            // Read without consuming: the mock reads the body again.
            String body = request.getBody() == null ? null : new String(request.getBody().getBytes(), StandardCharsets.UTF_8);
            if ("POST".equals(request.getMethod()) && pods.matches()) {
                Map<String, Object> created = JSON.unmarshal(body, Map.class);
                String write = "CREATE " + pods.group(1) + "/" + name(created) + " epoch=" + label(created, Names.EPOCH);
                return recorded(executor, write, admit("CREATE", pods.group(1), name(created), created, null), request);
            }
            if ("PATCH".equals(request.getMethod()) && pod.matches()) {
                if (!String.valueOf(request.getHeader("Content-Type")).contains("merge-patch")) {
                    return super.dispatch(request); // the test kubelet's JSON patches, which never stamp
                }
                Map<String, Object> patch = JSON.unmarshal(body, Map.class);
                String stamp = label(patch, Names.STOP_EPOCH);
                Map<String, Object> before = current(path);
                MockResponse refused = before == null ? null : admit("UPDATE", pod.group(1), pod.group(2), mergePatch(before, patch), before);
                if (refused != null || stamp == null) {
                    return recorded(executor && stamp != null, "STAMP " + pod.group(1) + "/" + pod.group(2) + " stop-epoch=" + stamp, refused, request);
                }
                MockResponse response = super.dispatch(request);
                if (executor) {
                    boolean done = response.code() < 300;
                    String version = done ? resourceVersion(JSON.unmarshal(new String(response.getBody().getBytes(), StandardCharsets.UTF_8), Map.class))
                            : "?";
                    podWrites.add("STAMP " + pod.group(1) + "/" + pod.group(2) + " stop-epoch=" + stamp + " rv=" + version
                            + (done ? "" : " -> " + response.code()));
                }
                return response;
            }
            if ("PUT".equals(request.getMethod()) && pod.matches()) {
                Map<String, Object> after = JSON.unmarshal(body, Map.class);
                return recorded(false, null, admit("UPDATE", pod.group(1), pod.group(2), after, current(path)), request);
            }
            if ("DELETE".equals(request.getMethod()) && pod.matches()) {
                Matcher grace = GRACE.matcher(body == null ? "" : body);
                Long seconds = grace.find() ? Long.parseLong(grace.group(1)) : null;
                if (seconds != null) {
                    deletionGrace.put(pod.group(1) + "/" + pod.group(2), seconds);
                }
                Map<String, Object> options = body == null || body.isBlank() ? Map.of() : JSON.unmarshal(body, Map.class);
                String precondition = options.get("preconditions") instanceof Map<?, ?> p ? (String) p.get("resourceVersion") : null;
                MockResponse refused = null;
                if (precondition != null) {
                    Map<String, Object> before = current(path);
                    if (before != null && (!precondition.equals(resourceVersion(before)) || conflictingDeletes.getAndUpdate(n -> Math.max(0, n - 1)) > 0)) {
                        refused = status(409, "Conflict", "Operation cannot be fulfilled on pods \"" + pod.group(2)
                                + "\": the ResourceVersion in the precondition (" + precondition + ") does not match the ResourceVersion in record");
                    }
                }
                String write = "DELETE " + pod.group(1) + "/" + pod.group(2) + " rv=" + (precondition == null ? "-" : precondition)
                        + " grace=" + (seconds == null ? "-" : seconds);
                return recorded(executor, write, refused, request);
            }
            return super.dispatch(request);
        }

        /** Records the executor's write, and answers the refusal or what the mock does. */
        private MockResponse recorded(boolean record, String write, MockResponse refused, RecordedRequest request) {
            MockResponse response = refused != null ? refused : super.dispatch(request);
            if (record) {
                podWrites.add(write + (response.code() < 300 ? "" : " -> " + response.code()));
            }
            return response;
        }

        /** The fence policy's answer, as the API server gives it: null when allowed. */
        private MockResponse admit(String operation, String namespace, String name, Map<String, Object> object, Map<String, Object> old) {
            FencePolicy policy = fencePolicy;
            if (policy == null) {
                return null;
            }
            var ref = policy.binding.getSpec().getParamRef();
            Map<String, Object> params = current("/api/v1/namespaces/" + ref.getNamespace() + "/configmaps/" + ref.getName());
            if (policy.admit(operation, object, old, params) instanceof FencePolicy.Decision.Denied denied) {
                return status(403, "Forbidden", "pods \"" + name + "\" is forbidden: ValidatingAdmissionPolicy '" + policy.policy.getMetadata().getName()
                        + "' with binding '" + policy.binding.getMetadata().getName() + "' denied request: " + denied.message());
            }
            return null;
        }

        private Map<String, Object> current(String path) {
            MockResponse response = handleGet(path.replaceAll("\\?.*", ""));
            return response.code() == 200 ? JSON.unmarshal(new String(response.getBody().getBytes(), StandardCharsets.UTF_8), Map.class) : null;
        }

        /**
         * The mock's watch listener, when a watch closes, waits for its pending sends, which need the event loop
         * it blocks: a minute of a stalled server each time a client stops watching. So the listener is taken off
         * the dispatcher's list at once (no more events for it: an event for a listener shut down fails the whole
         * request that caused it), and closed a moment later, elsewhere.
         */
        @Override
        public MockResponse handleWatch(String path) {
            MockResponse response = super.handleWatch(path);
            WebSocketListener watch = response.getWebSocketListener();
            return response.withWebSocketUpgrade(new WebSocketListener() {
                @Override
                public void onBeforeAccept(WebSocket socket, Response accepted) {
                    watch.onBeforeAccept(socket, accepted);
                }

                @Override
                public void onOpen(WebSocket socket, Response opened) {
                    watch.onOpen(socket, opened);
                }

                @Override
                public void onMessage(WebSocket socket, String text) {
                    watch.onMessage(socket, text);
                }

                @Override
                public void onClosing(WebSocket socket, int code, String reason) {
                    watch.onClosing(socket, code, reason);
                }

                @Override
                public void onClosed(WebSocket socket, int code, String reason) {
                    listeners().remove(watch);
                    elsewhere(() -> watch.onClosed(socket, code, reason));
                }

                @Override
                public void onFailure(WebSocket socket, Throwable failure, Response failed) {
                    listeners().remove(watch);
                    elsewhere(() -> watch.onFailure(socket, failure, failed));
                }
            });
        }

        @SuppressWarnings("unchecked")
        private java.util.Set<Object> listeners() {
            try {
                java.lang.reflect.Field field = KubernetesCrudDispatcher.class.getDeclaredField("watchEventListeners");
                field.setAccessible(true);
                return (java.util.Set<Object>) field.get(this);
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException("the mock's dispatcher changed: no watchEventListeners", e);
            }
        }

        private MockResponse logOf(String namespace, String pod, Map<String, String> query) {
            TestKubelet current = kubelet;
            String text = current == null ? null : current.log(namespace, pod, "true".equals(query.get("timestamps")), query.get("sinceTime"));
            if (text == null) {
                return new MockResponse().setResponseCode(404).setBody("{\"kind\":\"Status\",\"code\":404,\"message\":\"pods \\\"" + pod + "\\\" not found\"}");
            }
            return new MockResponse().setResponseCode(200).setBody(text);
        }
    }

    private static MockResponse status(int code, String reason, String message) {
        return new MockResponse().setResponseCode(code).setBody(JSON.asJson(Map.of("kind", "Status", "apiVersion", "v1", "status", "Failure",
                "reason", reason, "code", code, "message", message)));
    }

    /** A JSON merge patch (RFC 7386) applied. */
    @SuppressWarnings("unchecked")
    static Map<String, Object> mergePatch(Map<String, Object> target, Map<String, Object> patch) {
        Map<String, Object> result = new java.util.LinkedHashMap<>(target);
        patch.forEach((key, value) -> {
            if (value == null) {
                result.remove(key);
            } else if (value instanceof Map<?, ?> nested) {
                Object before = result.get(key);
                result.put(key, mergePatch(before instanceof Map<?, ?> b ? (Map<String, Object>) b : Map.of(), (Map<String, Object>) nested));
            } else {
                result.put(key, value);
            }
        });
        return result;
    }

    private static Map<?, ?> metadata(Map<String, Object> object) {
        return object.get("metadata") instanceof Map<?, ?> metadata ? metadata : Map.of();
    }

    private static String name(Map<String, Object> object) {
        return (String) metadata(object).get("name");
    }

    private static String resourceVersion(Map<String, Object> object) {
        return (String) metadata(object).get("resourceVersion");
    }

    private static String label(Map<String, Object> object, String key) {
        return metadata(object).get("labels") instanceof Map<?, ?> labels ? (String) labels.get(key) : null;
    }

    /**
     * The requests the executor made that its RBAC rules ({@link KubernetesPermissions}) would refuse, as
     * {@code "verb group/resource METHOD path"}: on a real cluster each would fail with Forbidden.
     */
    public java.util.List<String> forbiddenExecutorRequests() {
        return executorRequests.stream().filter(request -> {
            String[] words = request.split(" ");
            String[] resource = words[1].split("/", 2);
            return !KubernetesPermissions.allows(resource[0], resource[1], words[0]);
        }).sorted().toList();
    }

    /** The RBAC verb and {@code group/resource} a request needs, the way the API server's authorizer sees it. */
    static String rbacVerb(String method, String pathAndQuery) {
        String path = pathAndQuery.replaceAll("\\?.*", "");
        java.util.List<String> parts = new java.util.ArrayList<>(java.util.List.of(path.substring(1).split("/")));
        String group = parts.get(0).equals("api") ? "" : parts.get(1);
        java.util.List<String> rest = parts.subList(parts.get(0).equals("api") ? 2 : 3, parts.size());
        if (rest.size() > 2 && rest.get(0).equals("namespaces")) {
            rest = rest.subList(2, rest.size());
        }
        String resource = rest.get(0) + (rest.size() > 2 ? "/" + rest.get(2) : "");
        boolean named = rest.size() > 1;
        String verb = switch (method) {
            case "GET" -> named ? "get" : pathAndQuery.contains("watch=true") ? "watch" : "list";
            case "POST" -> "create";
            case "PUT" -> "update";
            case "PATCH" -> "patch";
            case "DELETE" -> named ? "delete" : "deletecollection";
            default -> method.toLowerCase(java.util.Locale.ROOT);
        };
        return verb + " " + group + "/" + resource;
    }

    private static final java.util.concurrent.ScheduledExecutorService CLOSER = java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
        Thread thread = new Thread(r, "mock-watch-close");
        thread.setDaemon(true);
        return thread;
    });

    /** Later and elsewhere: after events already under way for the listener have gone out. */
    private static void elsewhere(Runnable task) {
        CLOSER.schedule(task, 1, java.util.concurrent.TimeUnit.SECONDS);
    }

    private static Map<String, String> query(String query) {
        Map<String, String> parameters = new HashMap<>();
        if (query == null || query.length() < 2) {
            return parameters;
        }
        for (String pair : query.substring(1).split("&")) {
            int equals = pair.indexOf('=');
            if (equals > 0) {
                parameters.put(pair.substring(0, equals), URLDecoder.decode(pair.substring(equals + 1), StandardCharsets.UTF_8));
            }
        }
        return parameters;
    }

    @Override
    public void close() {
        server.destroy();
    }
}
