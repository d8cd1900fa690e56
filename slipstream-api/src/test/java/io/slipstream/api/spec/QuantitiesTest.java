package io.slipstream.api.spec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class QuantitiesTest {
    @ParameterizedTest
    @CsvSource({"2,2000", "0.5,500", "500m,500", "1.25,1250", "32,32000", "0.001,1", "1m,1"})
    void parsesCpu(String text, long milli) {
        assertThat(Quantities.parseMilliCpu(text)).isEqualTo(milli);
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "-1", "1.5m", "0.0001", "two", "1e3", "1 m", "99999999999999999999"})
    void rejectsBadCpu(String text) {
        assertThatThrownBy(() -> Quantities.parseMilliCpu(text)).isInstanceOf(IllegalArgumentException.class);
    }

    @ParameterizedTest
    @CsvSource({"1024,1024", "1Ki,1024", "256Gi,274877906944", "1k,1000", "1M,1000000", "1.5Gi,1610612736", "0.5Ki,512"})
    void parsesMemory(String text, long bytes) {
        assertThat(Quantities.parseBytes(text)).isEqualTo(bytes);
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "-1Gi", "1.1", "1Xi", "Gi", "16Ei", "0.3Ki"})
    void rejectsBadMemory(String text) {
        assertThatThrownBy(() -> Quantities.parseBytes(text)).isInstanceOf(IllegalArgumentException.class);
    }

    @ParameterizedTest
    @CsvSource({"274877906944,256Gi", "1024,1Ki", "1000,1000", "1610612736,1536Mi", "0,0"})
    void formatsMemoryExactly(long bytes, String text) {
        assertThat(Quantities.formatBytes(bytes)).isEqualTo(text);
        assertThat(Quantities.parseBytes(text)).isEqualTo(bytes);
    }

    @ParameterizedTest
    @CsvSource({"2000,2", "500,500m", "1250,1250m"})
    void formatsCpuExactly(long milli, String text) {
        assertThat(Quantities.formatMilliCpu(milli)).isEqualTo(text);
        assertThat(Quantities.parseMilliCpu(text)).isEqualTo(milli);
    }
}
