package io.slipstream.executor.local.network;

import io.slipstream.executor.ExecutorException;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/** Ports of the loopback address for instances on this machine: every node is this machine, each instance has its own. */
public final class LoopbackPorts {
    private LoopbackPorts() {
    }

    /** {@code ports} ports free on the loopback address now, none of them in {@code taken}. */
    public static List<Integer> free(int ports, Set<Integer> taken) {
        Set<Integer> chosen = new LinkedHashSet<>();
        for (int tries = 0; chosen.size() < ports; tries++) {
            if (tries > 1000) {
                throw new ExecutorException("cannot find " + ports + " free port(s)");
            }
            try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
                int port = socket.getLocalPort();
                if (!taken.contains(port)) {
                    chosen.add(port);
                }
            } catch (IOException e) {
                throw new ExecutorException("cannot find a free port: " + e.getMessage(), e);
            }
        }
        return List.copyOf(chosen);
    }
}
