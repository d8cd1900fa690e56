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
 * relies on: pod logs (served by the {@link TestKubelet}) and the grace period of a pod's deletion (the kubelet
 * reads it; the mock keeps a deleted pod while the kubelet's finalizer is on it, as a real server keeps a pod until
 * its kubelet confirms that its containers are dead).
 */
public final class TestApiServer implements AutoCloseable {
    private static final Pattern POD_LOG = Pattern.compile("/api/v1/namespaces/([^/]+)/pods/([^/?]+)/log(\\?.*)?");
    private static final Pattern POD = Pattern.compile("/api/v1/namespaces/([^/]+)/pods/([^/?]+)(\\?.*)?");
    private static final Pattern GRACE = Pattern.compile("\"gracePeriodSeconds\"\\s*:\\s*(\\d+)");

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

    private final class Dispatcher extends KubernetesCrudDispatcher {
        @Override
        public MockResponse dispatch(RecordedRequest request) {
            String path = request.getPath();
            if (EXECUTOR_AGENT.equals(request.getHeader("User-Agent"))) {
                executorRequests.add(rbacVerb(request.getMethod(), path) + " " + request.getMethod() + " " + path.replaceAll("\\?.*", ""));
            }
            Matcher log = POD_LOG.matcher(path);
            if ("GET".equals(request.getMethod()) && log.matches()) {
                return logOf(log.group(1), log.group(2), query(log.group(3)));
            }
            Matcher pod = POD.matcher(path);
            if ("DELETE".equals(request.getMethod()) && pod.matches()) {
                String body = request.getUtf8Body();
                Matcher grace = GRACE.matcher(body == null ? "" : body);
                if (grace.find()) {
                    deletionGrace.put(pod.group(1) + "/" + pod.group(2), Long.parseLong(grace.group(1)));
                }
            }
            return super.dispatch(request);
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
