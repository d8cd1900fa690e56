package io.slipstream.executor.local.network;

import io.slipstream.executor.local.files.SafeFiles;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.URI;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.concurrent.Semaphore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The way from a run's private network to the API: a Unix socket of the server's ({@code <instances>/.api.sock}) whose
 * connections are relayed, byte for byte, to the API's TCP address. Each private network has a forwarder that turns
 * {@code 127.0.0.1:80} there into a connection to this socket (see {@link RunNetworks}). Nothing is read or changed on
 * the way: every request still needs a token, so this adds no way in that the host's own network does not have.
 * At most {@link #MAX_CONNECTIONS} at once, and each run's forwarder at most {@link RunNetworks#MAX_CONNECTIONS_PER_RUN}:
 * more are refused, so no run can take every thread of the server.
 */
final class ApiRelay implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ApiRelay.class);
    static final int MAX_CONNECTIONS = 512;
    /** Debian's nogroup: the forwarders' group (socat su=nobody). */
    static final int FORWARDER_GID = 65534;

    private final Path socket;
    private final Path targetFile;
    private final Semaphore connections = new Semaphore(MAX_CONNECTIONS);
    private volatile InetSocketAddress target;
    private ServerSocketChannel server;
    private volatile boolean closed;

    /** @param socket where the socket goes; its directory also keeps the last target, for a server that restarts */
    ApiRelay(Path socket) {
        this.socket = socket;
        this.targetFile = socket.resolveSibling(socket.getFileName() + ".target");
        try {
            byte[] last = SafeFiles.readControlFile(targetFile, 4096);
            if (last != null) {
                target = addressOf(URI.create(new String(last, java.nio.charset.StandardCharsets.UTF_8).trim()));
            }
        } catch (IOException | RuntimeException e) {
            LOG.warn("cannot read the API address the relay last used: {}", e.toString());
        }
    }

    /** Relays to where {@code server} (an http or https URL, {@code SLIPSTREAM_SERVER}) points, from now on. */
    synchronized void relayTo(String server) throws IOException {
        InetSocketAddress address = addressOf(URI.create(server));
        if (!address.equals(target)) {
            target = address;
            SafeFiles.writeControlFile(targetFile, (server + "\n").getBytes(java.nio.charset.StandardCharsets.UTF_8), "rw-------");
        }
        start();
    }

    /** Listens, if it does not yet; a socket a previous server left is replaced. */
    synchronized void start() throws IOException {
        if (server != null || closed || target == null) {
            return;
        }
        Files.deleteIfExists(socket);
        ServerSocketChannel channel = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        channel.bind(UnixDomainSocketAddress.of(socket));
        // The forwarders connect as nobody, group nogroup: no run's uid may connect here directly (and hold connections).
        Files.setPosixFilePermissions(socket, PosixFilePermissions.fromString("rw-rw----"));
        try {
            Files.setAttribute(socket, "unix:gid", FORWARDER_GID);
        } catch (IOException | UnsupportedOperationException e) {
            LOG.warn("cannot give the API relay's socket to group {}: {}", FORWARDER_GID, e.toString());
        }
        server = channel;
        Thread acceptor = new Thread(this::acceptLoop, "slipstream-api-relay");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    private void acceptLoop() {
        while (!closed) {
            SocketChannel client;
            try {
                client = server.accept();
            } catch (IOException e) {
                if (!closed) {
                    LOG.warn("the API relay stopped accepting: {}", e.toString());
                }
                return;
            }
            if (!connections.tryAcquire()) {
                closeQuietly(client);
                continue;
            }
            Thread relay = new Thread(() -> relay(client), "slipstream-api-relay-connection");
            relay.setDaemon(true);
            relay.start();
        }
    }

    private void relay(SocketChannel client) {
        try (client; SocketChannel api = SocketChannel.open(target)) {
            Thread back = new Thread(() -> pump(api, client), "slipstream-api-relay-back");
            back.setDaemon(true);
            back.start();
            pump(client, api);
            back.join();
        } catch (IOException e) {
            // the API is not there (restarting), or the client went away
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            connections.release();
        }
    }

    /** Copies until {@code from} ends, then ends what goes to {@code to}. */
    private static void pump(SocketChannel from, SocketChannel to) {
        ByteBuffer buffer = ByteBuffer.allocate(16 * 1024);
        try {
            while (from.read(buffer) >= 0) {
                buffer.flip();
                while (buffer.hasRemaining()) {
                    to.write(buffer);
                }
                buffer.clear();
            }
            to.shutdownOutput();
        } catch (IOException e) {
            closeQuietly(to);
            closeQuietly(from);
        }
    }

    private static InetSocketAddress addressOf(URI server) {
        if (server.getHost() == null || !("http".equals(server.getScheme()) || "https".equals(server.getScheme()))) {
            throw new IllegalArgumentException("not an http(s) URL: " + server);
        }
        int port = server.getPort() > 0 ? server.getPort() : "https".equals(server.getScheme()) ? 443 : 80;
        return new InetSocketAddress(server.getHost(), port);
    }

    private static void closeQuietly(SocketChannel channel) {
        try {
            channel.close();
        } catch (IOException e) {
            // closing anyway
        }
    }

    @Override
    public synchronized void close() {
        closed = true;
        if (server != null) {
            try {
                server.close();
            } catch (IOException e) {
                // closing anyway
            }
        }
    }
}
