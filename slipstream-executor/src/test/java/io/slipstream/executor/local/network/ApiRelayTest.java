package io.slipstream.executor.local.network;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(60)
class ApiRelayTest {
    @TempDir
    Path dir;

    private PingApi api;

    @BeforeEach
    void startApi() throws Exception {
        api = new PingApi();
    }

    @AfterEach
    void stopApi() {
        api.close();
    }

    @Test
    void relaysARequestAndAfterARestartRelaysToTheSameApi() throws Exception {
        Path socket = dir.resolve(".api.sock");
        try (ApiRelay relay = new ApiRelay(socket)) {
            relay.relayTo(api.url());
            assertThat(get(socket)).startsWith("HTTP/1.1 200").endsWith("pong");
        }
        try (ApiRelay restarted = new ApiRelay(socket)) {
            restarted.start(); // nothing launched yet: it relays to where the last one did
            assertThat(get(socket)).startsWith("HTTP/1.1 200").endsWith("pong");
        }
    }

    private static String get(Path socket) throws Exception {
        try (SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            channel.connect(UnixDomainSocketAddress.of(socket));
            channel.write(ByteBuffer.wrap("GET /ping HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".getBytes(StandardCharsets.US_ASCII)));
            ByteBuffer buffer = ByteBuffer.allocate(4096);
            StringBuilder response = new StringBuilder();
            while (channel.read(buffer) >= 0) {
                buffer.flip();
                response.append(StandardCharsets.US_ASCII.decode(buffer));
                buffer.clear();
            }
            return response.toString();
        }
    }
}
