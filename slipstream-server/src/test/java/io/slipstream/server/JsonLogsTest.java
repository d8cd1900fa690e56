package io.slipstream.server;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.joran.JoranConfigurator;
import ch.qos.logback.core.status.Status;
import ch.qos.logback.core.status.StatusUtil;
import io.slipstream.api.codec.Json;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;
import tools.jackson.databind.JsonNode;

/** The server's logback.xml with SLIPSTREAM_LOG_FORMAT=json writes a JSON object per line, with the run as a field. */
class JsonLogsTest {
    @Test
    void aLineAboutARunIsOneJsonObjectWithTheRunAsAField() throws Exception {
        LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
        PrintStream stderr = System.err;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setProperty("SLIPSTREAM_LOG_FORMAT", "json");
        try {
            configure(context, "/logback.xml");
            System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
            try (var ignored = MDC.putCloseable("run", "train-1a2b3c4d")) {
                LoggerFactory.getLogger("io.slipstream.server.control.RunSteps").info("run {}: RUNNING -> SUCCEEDED", "train-1a2b3c4d");
            }
        } finally {
            System.setErr(stderr);
            System.clearProperty("SLIPSTREAM_LOG_FORMAT");
            configure(context, "/logback-test.xml"); // as the other tests of this JVM had it
        }
        String line = captured.toString(StandardCharsets.UTF_8).lines().filter(l -> l.contains("SUCCEEDED")).findFirst().orElseThrow();
        JsonNode json = Json.mapper().readTree(line);
        assertThat(json.get("level").asString()).isEqualTo("INFO");
        assertThat(json.get("formattedMessage").asString()).isEqualTo("run train-1a2b3c4d: RUNNING -> SUCCEEDED");
        assertThat(json.at("/mdc/run").asString()).isEqualTo("train-1a2b3c4d");
    }

    @Test
    void logbackPrintsNoStatusOfItsOwn() throws Exception {
        // At startup logback prints its own status on standard output when its configuration warns (here: the appender
        // not chosen is unused), unless a status listener is set; on standard output that corrupts what a command
        // prints there (simulate -o json was unreadable). That is the condition its service provider checks.
        LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
        try {
            configure(context, "/logback.xml");
            boolean warned = new StatusUtil(context).getHighestLevel(0) >= Status.WARN;
            assertThat(!warned || StatusUtil.contextHasStatusListener(context)).as("logback would print its status on standard output").isTrue();
        } finally {
            configure(context, "/logback-test.xml");
        }
    }

    private static void configure(LoggerContext context, String resource) throws Exception {
        context.reset();
        JoranConfigurator configurator = new JoranConfigurator();
        configurator.setContext(context);
        configurator.doConfigure(JsonLogsTest.class.getResource(resource));
    }
}
