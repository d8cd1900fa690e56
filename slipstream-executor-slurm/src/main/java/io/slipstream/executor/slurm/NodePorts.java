package io.slipstream.executor.slurm;

import io.slipstream.executor.ExecutorException;
import java.io.IOException;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * Ports for an instance's endpoint: the first of {@code slurm.ports} that no live instance on the same address holds
 * (the control plane says which). What else listens on a node that is not this machine cannot be seen from here, so the
 * range is the admin's to keep free; on an address of this machine (nodes emulated here, a single-node cluster), a
 * port that cannot be bound now is passed over too.
 */
final class NodePorts {
    private NodePorts() {
    }

    static List<Integer> free(String ip, int count, Set<Integer> taken, int first, int last) {
        InetAddress local = localAddress(ip);
        List<Integer> chosen = new ArrayList<>();
        for (int port = first; port <= last && chosen.size() < count; port++) {
            if (!taken.contains(port) && (local == null || bindable(local, port))) {
                chosen.add(port);
            }
        }
        if (chosen.size() < count) {
            throw new ExecutorException("no " + count + " free port(s) in " + first + "-" + last + " (slurm.ports): " + taken.size()
                    + " are held by live instances");
        }
        return chosen;
    }

    /** The address if it is one of this machine's, else {@code null}. */
    private static InetAddress localAddress(String ip) {
        if (ip == null) {
            return null;
        }
        try {
            InetAddress address = InetAddress.getByName(ip); // an IP literal: no lookup
            return address.isLoopbackAddress() || address.isAnyLocalAddress() || NetworkInterface.getByInetAddress(address) != null ? address : null;
        } catch (IOException e) {
            return null;
        }
    }

    private static boolean bindable(InetAddress address, int port) {
        try (ServerSocket socket = new ServerSocket(port, 1, address)) {
            return socket.isBound();
        } catch (IOException e) {
            return false;
        }
    }
}
