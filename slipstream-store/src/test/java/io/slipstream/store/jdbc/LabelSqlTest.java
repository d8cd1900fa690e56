package io.slipstream.store.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.label.LabelSelector;
import io.slipstream.store.jdbc.LabelSql.Form;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Which requirement drives the runs query: the rarest positive one, when few enough runs have its label. */
class LabelSqlTest {
    @Test
    void theRarestPositiveRequirementDrivesWhenItIsRareEnoughAndEveryOtherIsProbed() {
        record Row(String selector, Map<Integer, Long> counts, List<Form> expected) {
        }
        long rare = LabelSql.DRIVE_LIMIT;
        long common = LabelSql.DRIVE_LIMIT + 1;
        for (Row row : List.of(
                new Row("team=nlp", Map.of(0, common), List.of(Form.PROBE)),
                new Row("team=nlp", Map.of(0, rare), List.of(Form.DRIVE)),
                new Row("team=nlp,sweep", Map.of(0, 500L, 1, 20L), List.of(Form.PROBE, Form.DRIVE)),
                new Row("team=nlp,sweep", Map.of(0, 20L, 1, 20L), List.of(Form.DRIVE, Form.PROBE)),
                new Row("!sweep,team notin (a)", Map.of(), List.of(Form.PROBE, Form.PROBE)),
                new Row("!sweep,team in (a,b)", Map.of(1, 3L), List.of(Form.PROBE, Form.DRIVE)))) {
            LabelSelector selector = LabelSelector.parse(row.selector());
            assertThat(LabelSql.plan(selector, row.counts())).as(row.selector() + " " + row.counts()).isEqualTo(row.expected());
        }
    }

    @Test
    void everyRequirementIsWrittenWithBoundKeysAndValues() {
        LabelSelector selector = LabelSelector.parse("a=1,b notin (2,3),c,!d");
        StringBuilder sql = new StringBuilder();
        LabelSql.where(selector, List.of(Form.DRIVE, Form.PROBE, Form.PROBE, Form.PROBE), sql);
        assertThat(sql.toString()).isEqualTo(" AND id IN (SELECT run_id FROM run_labels WHERE label_key = :lk0 AND label_value IN (<lv0>))"
                + " AND NOT EXISTS (SELECT 1 FROM run_labels l1 WHERE l1.run_id = runs.id AND l1.label_key = :lk1 AND l1.label_value IN (<lv1>))"
                + " AND EXISTS (SELECT 1 FROM run_labels l2 WHERE l2.run_id = runs.id AND l2.label_key = :lk2)"
                + " AND NOT EXISTS (SELECT 1 FROM run_labels l3 WHERE l3.run_id = runs.id AND l3.label_key = :lk3)");
    }

    /**
     * A count only has to tell nothing, rare (at most DRIVE_LIMIT) and how rare: it stops past DRIVE_LIMIT, so a selector of
     * 32 common keys (counted over every workspace's runs) cannot make each page, and each watch poll, read the whole index 32 times.
     */
    @Test
    void countsStopPastTheDriveLimit() {
        org.jdbi.v3.core.Jdbi jdbi = org.jdbi.v3.core.Jdbi.create("jdbc:h2:mem:labelsql-counts;DB_CLOSE_DELAY=-1");
        jdbi.useHandle(h -> {
            h.execute("CREATE TABLE run_labels (run_id VARCHAR(64), label_key VARCHAR(317), label_value VARCHAR(63), PRIMARY KEY (run_id, label_key))");
            h.execute("CREATE INDEX run_labels_kv ON run_labels (label_key, label_value)");
            var batch = h.prepareBatch("INSERT INTO run_labels VALUES (:id, :key, :value)");
            for (int i = 0; i < LabelSql.DRIVE_LIMIT + 500; i++) {
                batch.bind("id", "run-" + i).bind("key", "team").bind("value", i < 10 ? "rare" : "nlp").add();
            }
            batch.execute();
            LabelSelector selector = LabelSelector.parse("team,team=nlp,team in (rare),other,!team");
            assertThat(LabelSql.counts(h, selector)).containsExactly(java.util.Map.entry(0, LabelSql.DRIVE_LIMIT + 1),
                    java.util.Map.entry(1, LabelSql.DRIVE_LIMIT + 1), java.util.Map.entry(2, 10L), java.util.Map.entry(3, 0L));
            LabelSelector matchable = LabelSelector.parse("team,team=nlp,team in (rare),!team");
            assertThat(LabelSql.plan(matchable, LabelSql.counts(h, matchable))).as("the plan is the same as with whole counts")
                    .containsExactly(Form.PROBE, Form.PROBE, Form.DRIVE, Form.PROBE);
        });
    }
}
