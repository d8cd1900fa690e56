package io.slipstream.executor.local.cgroup;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** The kernel's core lists, as a node's cpuset and the server's allowed cores are written: pure. */
class CpuListTest {
    @Test
    void listsAreReadAndWrittenAsTheKernelDoes() {
        Map<String, String> canonical = Map.of("0", "0", "0-3", "0-3", "0-3,8", "0-3,8", "3,0,1,2", "0-3", "0-1,1-2", "0-2",
                "8-8", "8", "10-11,4", "4,10-11", " 2-5 ", "2-5");
        canonical.forEach((text, written) -> assertThat(CpuList.parse(text)).as(text).hasToString(written));
        assertThat(CpuList.parse("0-3,8").count()).isEqualTo(5);
    }

    @Test
    void aListIsWithinAnotherOnlyWithAllItsCores() {
        CpuList machine = CpuList.parse("0-1");
        assertThat(CpuList.parse("1").within(machine)).isTrue();
        assertThat(CpuList.parse("0-1").within(machine)).isTrue();
        assertThat(CpuList.parse("1-2").within(machine)).isFalse();
        assertThat(CpuList.parse("1-3,7").without(machine)).hasToString("2-3,7");
    }

    @Test
    void whatIsNotAListIsRefusedSayingWhy() {
        Map<String, String> refused = Map.of("", "must list cores", "a", "'a' is not a core", "1-", "'1-' is not a core", "-1", "'-1' is not a core",
                "3-1", "runs backwards", "1,,2", "'' is not a core", "1-2-3", "'1-2-3' is not a core", "99999", "'99999' is not a core",
                "9000", "past the last a machine may have", "0 - 3", "is not a core");
        refused.forEach((text, why) -> assertThatThrownBy(() -> CpuList.parse(text)).as(text).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(why));
    }
}
