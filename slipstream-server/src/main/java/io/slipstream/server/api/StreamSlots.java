package io.slipstream.server.api;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.Map;

/**
 * The places of watch streams: at most {@code perUser} for one user and {@code total} for the server. A user's stream
 * beyond their bound takes the place of their oldest (a console's tab that went away is only noticed at its next
 * write, and a person paging quickly must not be refused for it); beyond the server's bound a stream is refused.
 * Not thread-safe: {@link RunWatch} holds its lock around every call.
 */
final class StreamSlots {
    /** One stream's place; {@code replaced} once a newer stream of its user took it. */
    static final class Slot {
        final String user;
        volatile boolean replaced;

        Slot(String user) {
            this.user = user;
        }
    }

    private final int perUser;
    private final int total;
    private final Map<String, Deque<Slot>> byUser = new HashMap<>();
    private int open;

    StreamSlots(int perUser, int total) {
        this.perUser = perUser;
        this.total = total;
    }

    /** A place for a new stream of {@code user}, or null when the server holds {@code total} streams of others. */
    Slot take(String user) {
        Deque<Slot> mine = byUser.computeIfAbsent(user, u -> new ArrayDeque<>());
        if (mine.size() >= perUser) {
            Slot oldest = mine.removeFirst();
            oldest.replaced = true;
            open--;
        } else if (open >= total) {
            if (mine.isEmpty()) {
                byUser.remove(user);
            }
            return null;
        }
        Slot slot = new Slot(user);
        mine.addLast(slot);
        open++;
        return slot;
    }

    /** Gives a stream's place back when it ends (a replaced one gave it already). */
    void release(Slot slot) {
        Deque<Slot> mine = byUser.get(slot.user);
        if (mine != null && mine.remove(slot)) {
            open--;
            if (mine.isEmpty()) {
                byUser.remove(slot.user);
            }
        }
    }

    int open() {
        return open;
    }
}
