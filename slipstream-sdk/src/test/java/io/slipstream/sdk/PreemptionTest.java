package io.slipstream.sdk;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PreemptionTest {
    @TempDir
    Path dir;

    @Test
    void theNoticeIsReadAndTheAcknowledgementWritten() throws Exception {
        Path notice = dir.resolve("preemption_notice.json");
        Path ack = dir.resolve("preemption_ack");
        Preemption preemption = Slipstream.of(Map.of("SLIPSTREAM_PREEMPTION_NOTICE_FILE", notice.toString(),
                "SLIPSTREAM_PREEMPTION_ACK_FILE", ack.toString())).preemption();
        assertThat(preemption.notice()).isEmpty();

        Files.writeString(notice, "{\"reason\":\"Reclaimed by team-a\",\"deadline\":\"2026-11-29T10:00:30Z\"}\n");
        assertThat(preemption.notice()).contains(new Preemption.Notice("Reclaimed by team-a", Instant.parse("2026-11-29T10:00:30Z")));

        preemption.acknowledge();
        assertThat(ack).exists();
    }

    @Test
    void theReasonTellsAChangeOfWorldAndAShrinkFromAStop() throws Exception {
        Path notice = dir.resolve("notice");
        Preemption preemption = Slipstream.of(Map.of("SLIPSTREAM_PREEMPTION_NOTICE_FILE", notice.toString())).preemption();
        Map<String, List<Boolean>> cases = new LinkedHashMap<>(); // reason: worldChanging, shrunk
        cases.put("WorldChange: the run shrinks from 4 to 2 instances (world 2)", List.of(true, false));
        cases.put("WorldChange:", List.of(true, false));
        cases.put("Shrunk: the run shrinks from 4 to 2 instances (world 2)", List.of(false, true));
        cases.put("Preempted: reclaimed by team-a", List.of(false, false));
        cases.put("worldchange: lower case is another reason", List.of(false, false));
        cases.put("Reclaimed; WorldChange: not at the start", List.of(false, false));
        for (var entry : cases.entrySet()) {
            Files.writeString(notice, "{\"reason\":\"" + entry.getKey() + "\",\"deadline\":\"2026-11-29T10:00:30Z\"}");
            Preemption.Notice read = preemption.notice().orElseThrow();
            assertThat(List.of(read.worldChanging(), read.shrunk())).as(entry.getKey()).isEqualTo(entry.getValue());
        }
        Files.writeString(notice, "{not json");
        assertThat(preemption.notice().orElseThrow().worldChanging()).as("an unreadable notice is a plain stop").isFalse();
    }

    @Test
    void anUnreadableNoticeStillCountsAsAStopRequest() throws Exception {
        Path notice = dir.resolve("notice");
        Files.writeString(notice, "{not json");
        assertThat(Slipstream.of(Map.of("SLIPSTREAM_PREEMPTION_NOTICE_FILE", notice.toString())).preemption().notice())
                .contains(new Preemption.Notice("stop requested", null));
    }
}
