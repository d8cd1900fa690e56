package io.slipstream.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.server.SlipstreamServer;
import org.junit.jupiter.api.Test;

/** The client, which knows nothing of the server, looks for the admin token where the server writes it. */
class AdminTokenFileTest {
    @Test
    void theClientReadsTheFileTheServerWrites() {
        assertThat(ClientOptions.ADMIN_TOKEN_FILE).isEqualTo(SlipstreamServer.ADMIN_TOKEN_FILE);
    }
}
