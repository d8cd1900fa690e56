package io.slipstream.store.jdbc;

import io.slipstream.api.codec.Json;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.Map;
import org.jdbi.v3.core.statement.SqlStatement;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.json.JsonMapper;

/**
 * How the {@code *Rows} classes write values to columns and read them back, the same for every table: times as
 * {@code TIMESTAMP WITH TIME ZONE} in UTC, text shortened to its column, JSON inside rows read as data.
 */
final class Columns {
    static final TypeReference<Map<String, String>> STRING_MAP = new TypeReference<>() {
    };
    /** Stored JSON is data: a field a later release dropped is ignored, as StoredSpecs does for specs. */
    static final JsonMapper STORED = Json.mapper().rebuild().disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES).build();
    /** The length of the reason columns ({@code VARCHAR(1024)}), and of an event's message ({@code VARCHAR(4096)}). */
    static final int REASON = 1024;
    static final int MESSAGE = 4096;

    private Columns() {
    }

    static <S extends SqlStatement<S>> S time(S statement, String name, Instant instant) {
        if (instant == null) {
            return statement.bindNull(name, Types.TIMESTAMP_WITH_TIMEZONE);
        }
        return statement.bind(name, OffsetDateTime.ofInstant(instant, ZoneOffset.UTC));
    }

    static Instant instant(ResultSet rs, String column) throws SQLException {
        OffsetDateTime time = rs.getObject(column, OffsetDateTime.class);
        return time == null ? null : time.toInstant();
    }

    static String truncate(String text, int max) {
        return text == null || text.length() <= max ? text : text.substring(0, max - 1) + "…";
    }
}
