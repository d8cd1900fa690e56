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

    private final KubernetesMockServer server;
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
         * it blocks: a minute of a stalled server each time a client stops watching. The wait runs elsewhere.
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
                    elsewhere(() -> watch.onClosed(socket, code, reason));
                }

                @Override
                public void onFailure(WebSocket socket, Throwable failure, Response failed) {
                    elsewhere(() -> watch.onFailure(socket, failure, failed));
                }
            });
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

    private static void elsewhere(Runnable task) {
        Thread thread = new Thread(task, "mock-watch-close");
        thread.setDaemon(true);
        thread.start();
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
