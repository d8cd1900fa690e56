package io.slipstream.cli.command;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.slipstream.api.codec.Json;
import io.slipstream.cli.CliException;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import tools.jackson.databind.JsonNode;

class GetTablesTest {
    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', quoteCharacter = '`', value = {
            "runs       | {\"id\": \"train-1\"}                                              | run/train-1",
            "pending    | {\"id\": \"train-2\"}                                              | run/train-2",
            "jobs       | {\"metadata\": {\"workspace\": \"team-a\", \"name\": \"train\"}}   | job/team-a/train",
            "quotas     | {\"metadata\": {\"workspace\": \"team-a\", \"name\": \"gpus\"}}    | quota/team-a/gpus",
            "secrets    | {\"metadata\": {\"workspace\": \"team-a\", \"name\": \"hf\"}}      | secret/team-a/hf",
            "workspaces | {\"metadata\": {\"name\": \"team-a\"}}                            | workspace/team-a",
            "shapes     | {\"metadata\": {\"name\": \"a100\"}}                               | shape/a100",
            "nodes      | {\"name\": \"node-1\"}                                             | node/node-1",
            "pools      | {\"name\": \"tree:team-a/gpus\"}                                   | pool/tree:team-a/gpus",
    })
    void namesAreKindSlashName(String kind, String item, String expected) {
        JsonNode node = Json.mapper().readTree(item);
        assertThat(GetTables.names(kind, List.of(node, node))).containsExactly(expected, expected);
    }

    @ParameterizedTest
    @CsvSource("leader")
    void aKindWithoutNamesSaysWhatToUse(String kind) {
        assertThatThrownBy(() -> GetTables.names(kind, List.of(Json.mapper().createObjectNode()))).isInstanceOf(CliException.class)
                .hasMessageContaining("jsonpath");
    }

    @org.junit.jupiter.api.Test
    void quotasShowTheirWeightedShareInfiniteForWeightZeroWhileBorrowing() {
        List<JsonNode> items = List.of(
                Json.mapper().readTree("{\"metadata\": {\"workspace\": \"b\", \"name\": \"gpu\"}, \"spec\": {\"type\": \"General\", \"min\": {\"gpu\": 8}},"
                        + " \"status\": {\"borrowed\": {\"gpu\": 8}, \"weightedShare\": 0.333333, \"fairShare\": 0.166667}}"),
                Json.mapper().readTree("{\"metadata\": {\"workspace\": \"c\", \"name\": \"gpu\"}, \"spec\": {\"type\": \"General\", \"min\": {\"gpu\": 8},"
                        + " \"fairSharing\": {\"weight\": 0}}, \"status\": {\"borrowed\": {\"gpu\": 4}}}"),
                Json.mapper().readTree("{\"metadata\": {\"workspace\": \"d\", \"name\": \"gpu\"}, \"spec\": {\"type\": \"General\", \"min\": {\"gpu\": 8}}}"));
        GetTables.Table table = GetTables.table("quotas", items, false);
        int share = table.header().indexOf("SHARE");
        assertThat(share).isPositive();
        assertThat(table.rows()).extracting(row -> row.get(share)).containsExactly("0.33", "inf", "-");
        assertThat(table.rows()).extracting(row -> row.get(table.header().indexOf("FAIR"))).containsExactly("0.17", "-", "-");
        GetTables.Table pools = GetTables.table("pools", List.of(Json.mapper().readTree("{\"name\": \"tree:org/gpus\", \"guaranteed\": {\"gpu\": 24},"
                + " \"lendable\": {\"gpu\": 32}}")), false);
        assertThat(pools.rows().get(0).get(pools.header().indexOf("LENDABLE"))).as("what shares are fractions of").isEqualTo("gpu=32");
        GetTables.Table tree = GetTables.table("quotas", List.of(Json.mapper().readTree("{\"metadata\": {\"workspace\": \"org\", \"name\": \"gpus\"},"
                + " \"spec\": {\"type\": \"General\", \"min\": {\"gpu\": 32}}, \"status\": {\"used\": {\"gpu\": 0}, \"subtreeUsed\": {\"gpu\": 16}}}")), false);
        assertThat(tree.rows().get(0).get(tree.header().indexOf("USED"))).as("a parent shows what its tree holds").isEqualTo("gpu=16 (tree)");
    }

    @org.junit.jupiter.api.Test
    void jobsShowTheirGroupsAndScheduleAndNodesWhyTheyAreDown() {
        GetTables.Table jobs = GetTables.table("jobs", List.of(Json.mapper().readTree("""
                {"metadata": {"workspace": "w", "name": "nightly", "version": 2}, "spec": {"priority": 3,
                 "nodeGroups": [{"name": "main", "replicas": 1}, {"name": "worker", "replicas": 3}],
                 "schedule": {"cron": "0 2 * * *", "timeZone": "Europe/Berlin"}}}
                """)), false);
        assertThat(jobs.rows().get(0).get(jobs.header().indexOf("GROUPS"))).isEqualTo("main(1),worker(3)");
        assertThat(jobs.rows().get(0).get(jobs.header().indexOf("INSTANCES"))).isEqualTo("4");
        assertThat(jobs.rows().get(0).get(jobs.header().indexOf("SCHEDULE"))).isEqualTo("0 2 * * * Europe/Berlin");
        GetTables.Table nodes = GetTables.table("nodes", List.of(Json.mapper().readTree("""
                {"name": "node-2", "state": "Down", "reason": "disk replaced", "capacity": {"cpu": "8", "gpu": 0}, "allocated": {"cpu": "0", "gpu": 0},
                 "instances": 0}
                """)), false);
        assertThat(nodes.rows().get(0).get(nodes.header().indexOf("REASON"))).isEqualTo("disk replaced");
    }

    @org.junit.jupiter.api.Test
    void oneJobAndTheWideListShowWhenEachRunsNextASuspendedScheduleNoTime() {
        List<JsonNode> jobs = List.of(Json.mapper().readTree("""
                {"metadata": {"workspace": "w", "name": "nightly"}, "spec": {"schedule": {"cron": "0 2 * * *", "timeZone": "Europe/Berlin"}},
                 "status": {"nextRunAt": "2099-06-02T00:00:00Z"}}
                """), Json.mapper().readTree("""
                {"metadata": {"workspace": "w", "name": "paused"}, "spec": {"schedule": {"cron": "0 2 * * *", "suspend": true}}, "status": {}}
                """), Json.mapper().readTree("{\"metadata\": {\"workspace\": \"w\", \"name\": \"once\"}, \"spec\": {}}"));
        GetTables.Table one = GetTables.table("jobs", jobs.subList(0, 1), false, false, true);
        assertThat(one.header()).containsSequence("SCHEDULE", "NEXT RUN");
        assertThat(one.rows().get(0).get(one.header().indexOf("NEXT RUN"))).startsWith("2099-06-02T00:00:00Z (in ");
        GetTables.Table wide = GetTables.table("jobs", jobs, true, false, false);
        assertThat(wide.header()).containsSequence("SCHEDULE", "NEXT RUN", "LABELS");
        assertThat(wide.rows()).extracting(row -> row.get(wide.header().indexOf("NEXT RUN")))
                .satisfiesExactly(next -> assertThat(next).startsWith("2099-06-02T00:00:00Z"), next -> assertThat(next).isEqualTo("suspended"),
                        next -> assertThat(next).isEmpty());
        assertThat(GetTables.table("jobs", jobs, false, false, false).header()).as("the plain list as before").doesNotContain("NEXT RUN");

        assertThat(GetTables.nextRun(jobs.get(0), java.time.Instant.parse("2099-06-01T07:00:00Z"))).isEqualTo("2099-06-02T00:00:00Z (in 17h)");
        assertThat(GetTables.nextRun(Json.mapper().readTree("{\"spec\": {\"schedule\": {\"cron\": \"0 2 * * *\"}}}"), java.time.Instant.EPOCH))
                .as("a server that says nothing").isEqualTo("-");
    }
}
