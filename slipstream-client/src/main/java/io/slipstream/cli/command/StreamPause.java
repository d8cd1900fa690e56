package io.slipstream.cli.command;

import io.slipstream.cli.ApiClient;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;

/**
 * A {@link Watch.Pause} that waits for the server's watch stream ({@code GET /api/v1/watch}) to tell of a change
 * instead of for a fixed interval: {@code --watch} then shows a change as soon as the server sees it, and asks for
 * nothing while nothing changes. A server without the stream (404) is polled every interval as before. A stream that
 * ends (its timeout, a server restart) is opened again at the next pause, and its {@code ready} event ends that pause
 * at once, so that a change made while no stream was open is read.
 */
final class StreamPause implements Watch.Pause, AutoCloseable {
    private final ApiClient api;
    private final Map<String, String> query;
    private final Watch.Pause fallback;
    private BufferedReader events;
    private boolean polling;

    StreamPause(ApiClient api, Map<String, String> query, Watch.Pause fallback) {
        this.api = api;
        this.query = query;
        this.fallback = fallback;
    }

    @Override
    public void sleep(Duration interval) throws InterruptedException {
        if (!polling && events == null) {
            InputStream stream = api.streamIfServed("/api/v1/watch", query);
            if (stream == null) {
                polling = true;
            } else {
                events = new BufferedReader(new InputStreamReader(stream, StandardCharsets.UTF_8));
            }
        }
        if (polling) {
            fallback.sleep(interval);
            return;
        }
        try {
            String event = nextEvent(events);
            if (event == null || event.equals("end")) {
                close();
                if (event == null) {
                    fallback.sleep(interval); // the server went away: do not spin while it comes back
                }
            }
        } catch (IOException e) {
            close();
            fallback.sleep(interval);
        }
    }

    /** The type of the next event ({@code ready}, {@code run}, {@code end}; comments skipped), or null at the stream's end. */
    static String nextEvent(BufferedReader in) throws IOException {
        String type = null;
        for (String line = in.readLine(); line != null; line = in.readLine()) {
            if (line.startsWith("event:")) {
                type = line.substring(6).trim();
            } else if (line.isEmpty() && type != null) {
                return type;
            }
        }
        return null;
    }

    @Override
    public void close() {
        if (events != null) {
            try {
                events.close();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            } finally {
                events = null;
            }
        }
    }
}
