package io.slipstream.store.jdbc;

import io.slipstream.api.label.LabelSelector;
import io.slipstream.api.label.Requirement;
import java.util.ArrayList;
import java.util.List;
import org.jdbi.v3.core.statement.Query;

/**
 * A label selector as conditions on {@code runs}: each requirement an EXISTS or NOT EXISTS over {@code run_labels}
 * (the primary key answers it per run), so the store pages through matching runs only. Keys and values are bound,
 * never written into the SQL.
 */
final class LabelSql {
    private LabelSql() {
    }

    /** Appends {@code AND ...} for every requirement of {@code selector} to {@code sql}. */
    static void where(LabelSelector selector, StringBuilder sql) {
        List<Requirement> requirements = selector.requirements();
        for (int i = 0; i < requirements.size(); i++) {
            String has = "SELECT 1 FROM run_labels l WHERE l.run_id = runs.id AND l.label_key = :lk" + i;
            String withValue = has + " AND l.label_value IN (<lv" + i + ">)";
            sql.append(" AND ").append(requirements.get(i).accept(new Requirement.Cases<String>() {
                @Override
                public String in(Requirement.In r) {
                    return "EXISTS (" + withValue + ")";
                }

                @Override
                public String notIn(Requirement.NotIn r) {
                    return "NOT EXISTS (" + withValue + ")";
                }

                @Override
                public String exists(Requirement.Exists r) {
                    return "EXISTS (" + has + ")";
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
