package io.slipstream.api.spec;

import com.cronutils.model.CronType;
import com.cronutils.model.definition.CronDefinitionBuilder;
import com.cronutils.model.time.ExecutionTime;
import com.cronutils.parser.CronParser;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.util.Optional;

/**
 * Cron expressions (five fields, as in crontab), through cron-utils. The library throws unchecked exceptions of
 * several kinds on garbage, so every call is wrapped: callers get a message or an empty result, never a stack trace.
 */
public final class Cron {
    /** The longest expression (the schema's {@code maxLength}). */
    public static final int MAX_LENGTH = 256;
    private static final CronParser PARSER = new CronParser(CronDefinitionBuilder.instanceDefinitionFor(CronType.UNIX));

    private final ExecutionTime executionTime;
    private final ZoneId zone;

    private Cron(ExecutionTime executionTime, ZoneId zone) {
        this.executionTime = executionTime;
        this.zone = zone;
    }

    /** Why {@code expression} is not a usable cron expression, or {@code null} if it is one. */
    public static String problem(String expression) {
        try {
            parse(expression, ZoneId.of("UTC"));
            return null;
        } catch (IllegalArgumentException e) {
            return e.getMessage();
        }
    }

    /** @throws IllegalArgumentException with a message fit for a user */
    public static Cron parse(String expression, ZoneId zone) {
        if (expression.length() > MAX_LENGTH) { // before cron-utils, which takes seconds over a long list
            throw new IllegalArgumentException("is not a cron expression: must be at most " + MAX_LENGTH + " characters (is " + expression.length() + ")");
        }
        if (expression.isBlank() || expression.trim().split("\\s+").length != 5) {
            throw new IllegalArgumentException("'" + expression + "' is not a cron expression: give five fields (minute hour day-of-month month day-of-week), e.g. \"0 2 * * *\"");
        }
        try {
            var cron = PARSER.parse(expression.trim());
            cron.validate();
            ExecutionTime executionTime = ExecutionTime.forCron(cron);
            if (executionTime.nextExecution(ZonedDateTime.now(zone)).isEmpty()) { // some garbage only fails here
                throw new NeverFires();
            }
            return new Cron(executionTime, zone);
        } catch (NeverFires e) {
            // A date no month has (0 0 31 2 *): the control loop would search for it every second, for nothing.
            throw new IllegalArgumentException("'" + expression + "' is not a cron expression that fires: it names a date that never comes", null);
        } catch (RuntimeException e) {
            String detail = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
            throw new IllegalArgumentException("'" + expression + "' is not a cron expression: " + detail, null);
        }
    }

    /** The first due time strictly after {@code after}, if any. */
    public Optional<Instant> nextAfter(Instant after) {
        try {
            return executionTime.nextExecution(after.atZone(zone)).map(ZonedDateTime::toInstant);
        } catch (RuntimeException e) {
            return Optional.empty();
        }
    }

    /** The last due time at or before {@code atOrBefore}, if any. */
    public Optional<Instant> lastAtOrBefore(Instant atOrBefore) {
        try {
            Optional<Instant> next = nextAfter(atOrBefore.minusSeconds(1));
            if (next.isPresent() && !next.get().isAfter(atOrBefore)) {
                return next;
            }
            return executionTime.lastExecution(atOrBefore.atZone(zone)).map(ZonedDateTime::toInstant);
        } catch (RuntimeException e) {
            return Optional.empty();
        }
    }

    private static final class NeverFires extends RuntimeException {
        NeverFires() {
            super(null, null, false, false);
        }
    }
}
