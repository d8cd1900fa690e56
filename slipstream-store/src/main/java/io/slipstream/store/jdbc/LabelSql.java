package io.slipstream.store.jdbc;

import io.slipstream.api.label.LabelSelector;
import io.slipstream.api.label.Requirement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.statement.Query;

/**
 * A label selector as conditions on {@code runs}, so that the store pages through matching runs only. Each
 * requirement is a correlated EXISTS / NOT EXISTS over {@code run_labels} (one primary-key probe per run, while the
 * runs are read newest first until the page is full), except that a rare positive requirement (few runs have the
 * label) drives the query instead: {@code id IN} its runs, found from the index on key and value. Probing alone reads
 * every run when few match, driving alone reads every match when many do; H2 does not choose between them itself
 * (docs/benchmarks.md). Keys and values are bound, never written into the SQL.
 */
final class LabelSql {
    /** A positive requirement with at most this many labelled runs drives the query. */
    static final long DRIVE_LIMIT = 2_000;

    private LabelSql() {
    }

    /** How each requirement is written: probed per run, or the set of runs that drives the query. */
    enum Form { PROBE, DRIVE }

    /**
     * The form of each requirement, from how many runs have each positive requirement's label ({@code counts}, by
     * index; a negative one has none): the rarest positive one drives when it is rare enough. Pure.
     */
    static List<Form> plan(LabelSelector selector, Map<Integer, Long> counts) {
        int rarest = -1;
        for (Map.Entry<Integer, Long> count : new java.util.TreeMap<>(counts).entrySet()) { // ties: the first
            if (count.getValue() <= DRIVE_LIMIT && (rarest < 0 || count.getValue() < counts.get(rarest))) {
                rarest = count.getKey();
            }
        }
        List<Form> forms = new ArrayList<>();
        for (int i = 0; i < selector.requirements().size(); i++) {
            forms.add(i == rarest ? Form.DRIVE : Form.PROBE);
        }
        return forms;
    }

    /**
     * How many runs have the label of each positive requirement (by index), counted up to {@code DRIVE_LIMIT + 1}: the
     * plan needs no more, and a label common to many runs (of any workspace) is not read through for each requirement of
     * every page and watch poll. A 0 means nothing can match.
     */
    static Map<Integer, Long> counts(Handle h, LabelSelector selector) {
        Map<Integer, Long> counts = new java.util.TreeMap<>();
        List<Requirement> requirements = selector.requirements();
        for (int i = 0; i < requirements.size(); i++) {
            Requirement requirement = requirements.get(i);
            if (requirement instanceof Requirement.In || requirement instanceof Requirement.Exists) {
                Query count = h.createQuery("SELECT COUNT(*) FROM (SELECT 1 FROM run_labels WHERE label_key = :lk"
                        + (requirement instanceof Requirement.In ? " AND label_value IN (<lv>)" : "") + " LIMIT :cap) c")
                        .bind("lk", requirement.key()).bind("cap", DRIVE_LIMIT + 1);
                if (requirement instanceof Requirement.In in) {
                    count.bindList("lv", new ArrayList<>(in.values()));
                }
                counts.put(i, count.mapTo(Long.class).one());
            }
        }
        return counts;
    }

    /** Appends {@code AND ...} for every requirement of {@code selector} to {@code sql}, each in its form. */
    static void where(LabelSelector selector, List<Form> forms, StringBuilder sql) {
        List<Requirement> requirements = selector.requirements();
        for (int i = 0; i < requirements.size(); i++) {
            String alias = "l" + i;
            boolean drive = forms.get(i) == Form.DRIVE;
            String has = drive ? "SELECT run_id FROM run_labels WHERE label_key = :lk" + i
                    : "SELECT 1 FROM run_labels " + alias + " WHERE " + alias + ".run_id = runs.id AND " + alias + ".label_key = :lk" + i;
            String withValue = has + " AND " + (drive ? "" : alias + ".") + "label_value IN (<lv" + i + ">)";
            sql.append(" AND ").append(requirements.get(i).accept(new Requirement.Cases<String>() {
                @Override
                public String in(Requirement.In r) {
                    return drive ? "id IN (" + withValue + ")" : "EXISTS (" + withValue + ")";
                }

                @Override
                public String notIn(Requirement.NotIn r) {
                    return "NOT EXISTS (" + withValue + ")";
                }

                @Override
                public String exists(Requirement.Exists r) {
                    return drive ? "id IN (" + has + ")" : "EXISTS (" + has + ")";
                }

                @Override
                public String notExists(Requirement.NotExists r) {
                    return "NOT EXISTS (" + has + ")";
                }
            }));
        }
    }

    /** Binds what {@link #where} refers to. */
    static void bind(LabelSelector selector, Query query) {
        List<Requirement> requirements = selector.requirements();
        for (int i = 0; i < requirements.size(); i++) {
            Requirement requirement = requirements.get(i);
            query.bind("lk" + i, requirement.key());
            if (requirement instanceof Requirement.In in) {
                query.bindList("lv" + i, new ArrayList<>(in.values()));
            } else if (requirement instanceof Requirement.NotIn notIn) {
                query.bindList("lv" + i, new ArrayList<>(notIn.values()));
            }
        }
    }
}
