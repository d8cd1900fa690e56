package io.slipstream.cli.command;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.codec.Json;
import java.util.List;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

class UsageCommandTest {
    private static final String LINE = """
            {"gpuHours": {"inQuota": 2.5, "borrowed": 1.25, "lent": 0, "lostToPreemption": 0.125},
             "cpuHours": {"inQuota": 1, "borrowed": 0.5, "lent": 0, "lostToPreemption": 0},
             "queued": {"hours": 0.75, "gpuHours": 3}}
            """;

    @Test
    void aGroupWithoutAKeyIsNamedForWhatItIs() {
        JsonNode line = Json.mapper().readTree(LINE);
        assertThat(UsageCommand.row(line, UsageCommand.By.user, true)).containsExactly("(schedule)", "2.50", "1.25", "0.00", "0.13", "1.50", "0.00",
                "0.75");
        assertThat(UsageCommand.row(line, UsageCommand.By.quota, true).subList(0, 2)).containsExactly("(none)", "(none)");
        assertThat(UsageCommand.row(line, UsageCommand.By.quota, false).subList(0, 2)).containsExactly("", "");
    }

    @Test
    void csvHasEveryFigureInFullAndAColumnForEach() {
        JsonNode line = Json.mapper().readTree(LINE.replace("{\"gpuHours\"", "{\"user\": \"alice\", \"gpuHours\""));
        List<String> row = UsageCommand.row(line, UsageCommand.By.user, false);
        assertThat(row).hasSameSizeAs(UsageCommand.header(UsageCommand.By.user, false));
        assertThat(row).containsExactly("alice", "2.500000", "1.250000", "0.000000", "0.125000", "1.000000", "0.500000", "0.000000", "0.000000",
                "0.750000", "3.000000", "0.000000");
    }

    @Test
    void theMeasuredCpuHoursStandBesideTheHeldOnes() {
        JsonNode line = Json.mapper().readTree(LINE.replace("{\"gpuHours\"", "{\"measuredCpuHours\": 0.4125, \"gpuHours\""));
        List<String> table = UsageCommand.row(line, UsageCommand.By.user, true);
        assertThat(table.get(UsageCommand.header(UsageCommand.By.user, true).indexOf("CPU-H USED"))).isEqualTo("0.41");
        assertThat(table.get(UsageCommand.header(UsageCommand.By.user, true).indexOf("CPU-H"))).isEqualTo("1.50");
        List<String> csv = UsageCommand.row(line, UsageCommand.By.user, false);
        assertThat(csv.get(UsageCommand.header(UsageCommand.By.user, false).indexOf("cpu_hours_measured"))).isEqualTo("0.412500");
    }

    @Test
    void csvFieldsAreQuotedAndFormulasDefused() {
        record Row(String field, String expected) {
        }
        for (Row row : List.of(new Row("alice", "alice"), new Row("a,b", "\"a,b\""), new Row("say \"hi\"", "\"say \"\"hi\"\"\""),
                new Row("=HYPERLINK(\"x\")", "\"'=HYPERLINK(\"\"x\"\")\""), new Row("-1.5", "-1.5"), new Row("@sum", "'@sum"), new Row("", ""))) {
            assertThat(UsageCommand.csv(row.field())).as(row.field()).isEqualTo(row.expected());
        }
    }
}
