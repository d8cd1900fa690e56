package io.slipstream.store.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.slipstream.api.codec.Json;
import io.slipstream.store.UnreadableRecordException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/** The control loop reads the active runs every cycle: an unreadable one is named in the log once, not every second. */
class UnreadableRowsTest {
    private final Logger logger = (Logger) LoggerFactory.getLogger(UnreadableRows.class);
    private final ListAppender<ILoggingEvent> log = new ListAppender<>();

    @BeforeEach
    void listen() {
        log.start();
        logger.addAppender(log);
    }

    @AfterEach
    void stop() {
        logger.detachAppender(log);
    }

    @Test
    void eachRecordIsReportedOnceAtErrorForEachReason() {
        UnreadableRows rows = new UnreadableRows();
        UnreadableRecordException spec = UnreadableRows.of("run r-1", "team-a", bindFailure());
        for (int cycle = 0; cycle < 5; cycle++) {
            rows.report(spec);
        }
        rows.report(UnreadableRows.of("run r-2", "team-a", new IllegalArgumentException("No enum constant RunState.PAUSED")));
        rows.report(UnreadableRows.of("run r-1", "team-a", new IllegalArgumentException("No enum constant RunState.PAUSED")));

        assertThat(log.list).extracting(ILoggingEvent::getLevel).containsOnly(Level.ERROR);
        assertThat(log.list).extracting(ILoggingEvent::getFormattedMessage).hasSize(3)
                .first().asString().startsWith("run r-1 is stored in a form this server cannot read: at nodeGroups[0].replicas: ");
    }

    @Test
    void theReasonIsOneLineWithThePathOfTheField() {
        UnreadableRecordException e = UnreadableRows.of("run r-1", null, bindFailure());
        assertThat(e.why()).startsWith("at nodeGroups[0].replicas: ").doesNotContain("\n");
        assertThat(e.workspace()).isNull();
        assertThat(UnreadableRows.of("run r-1", null, new IllegalStateException("x".repeat(2000))).why()).hasSize(500).endsWith("…");
    }

    private static RuntimeException bindFailure() {
        try {
            io.slipstream.api.spec.StoredSpecs.readJob(Json.mapper().readTree("{\"apiVersion\":\"slipstream/v1\",\"kind\":\"Job\",\"metadata\":"
                    + "{\"name\":\"j\",\"workspace\":\"team-a\"},\"spec\":{\"nodeGroups\":[{\"name\":\"w\",\"replicas\":\"many\","
                    + "\"resources\":{\"cpu\":1,\"memory\":\"1Gi\"},\"command\":[\"x\"]}]}}"));
        } catch (RuntimeException e) {
            return e;
        }
        throw new AssertionError("expected the spec not to bind");
    }
}
