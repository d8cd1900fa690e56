package io.slipstream.sdk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

class SlipstreamTest {
    @Test
    void theWorldVersionIsOneUnlessAnElasticRunChangedSize() {
        assertThat(Slipstream.of(Map.of()).worldVersion()).isEqualTo(1);
        Slipstream second = Slipstream.of(Map.of("SLIPSTREAM_WORLD_VERSION", "2", "SLIPSTREAM_RANK", "1", "SLIPSTREAM_WORLD_SIZE", "2"));
        assertThat(second.worldVersion()).isEqualTo(2);
        assertThat(second.worldSize()).isEqualTo(2);
        assertThatThrownBy(() -> Slipstream.of(Map.of("SLIPSTREAM_WORLD_VERSION", "two")).worldVersion())
                .hasMessage("SLIPSTREAM_WORLD_VERSION is not a number: two");
    }
}
