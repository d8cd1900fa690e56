package io.slipstream.server.control;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.slipstream.api.codec.Json;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** What a watch of the namespace saw, in order: each pod's additions and deletions, and the notice each was given. */
final class PodHistory implements Watcher<Pod> {
    private final List<String> events = new ArrayList<>();
    private final Map<String, String> notices = new HashMap<>();

    @Override
    public synchronized void eventReceived(Action action, Pod pod) {
        String name = pod.getMetadata().getName();
        events.add(action + " " + name);
        var annotations = pod.getMetadata().getAnnotations();
        String notice = annotations == null ? null : annotations.get("slipstream.io/preemption-notice");
        if (notice != null) {
            notices.put(name, Json.mapper().readTree(notice).get("reason").asString());
        }
    }

    @Override
    public void onClose(WatcherException cause) {
    }

    synchronized int indexOf(String action, String pod) {
        int index = events.indexOf(action + " " + pod);
        assertThat(index).as("%s %s seen; saw %s", action, pod, events).isNotNegative();
        return index;
    }

    synchronized String notice(String pod) {
        return notices.getOrDefault(pod, "(none)");
    }
}
