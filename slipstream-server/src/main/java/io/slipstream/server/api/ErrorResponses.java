package io.slipstream.server.api;

import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import io.javalin.http.HttpResponseException;
import io.slipstream.api.problem.InvalidInputException;
import io.slipstream.api.problem.Problem;
import io.slipstream.api.wire.ErrorView;
import io.slipstream.store.ConflictException;
import io.slipstream.store.StoreUnavailableException;
import io.slipstream.store.UnreadableRecordException;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The one place where errors become HTTP statuses, each with a stable code and, for bad input, its problems. */
final class ErrorResponses {
    private static final Logger LOG = LoggerFactory.getLogger(ErrorResponses.class);
    /** A store outage is answered within the pool's connection timeout; clients try again after this. */
    static final long STORE_RETRY_AFTER_SECONDS = 2;

    private ErrorResponses() {
    }

    static void register(RoutesConfig routes) {
        routes.exception(InvalidInputException.class, (e, ctx) -> error(ctx, 400, "INVALID_INPUT", e.getMessage(), bounded(e.problems())));
        routes.exception(ApiException.class, (e, ctx) -> error(ctx, e.status(), e.code(), e.getMessage(), List.of()));
        routes.exception(ConflictException.class, (e, ctx) -> error(ctx, 409, "CONFLICT", e.getMessage(), List.of()));
        routes.exception(StoreUnavailableException.class, (e, ctx) -> {
            LOG.debug("{} {}: {}", ctx.method(), ctx.path(), e.getMessage()); // the control loop logs the outage once
            ctx.header("Retry-After", Long.toString(STORE_RETRY_AFTER_SECONDS));
            error(ctx, 503, "STORE_UNAVAILABLE", "the store cannot be reached now; try again shortly", List.of());
        });
        // Not the caller's fault nor a crash: the record needs repair (docs/operations.md), every other one still works.
        routes.exception(UnreadableRecordException.class, (e, ctx) -> error(ctx, 409, "STORED_DATA_UNREADABLE", e.getMessage(), List.of()));
        routes.exception(HttpResponseException.class, (e, ctx) -> error(ctx, e.getStatus(), codeOf(e.getStatus()), e.getMessage(), List.of()));
        routes.exception(Exception.class, (e, ctx) -> {
            LOG.error("internal error on {} {}", ctx.method(), ctx.path(), e);
            error(ctx, 500, "INTERNAL", "internal error; the server log has the details", List.of());
        });
    }

    /** The first {@link io.slipstream.api.spec.SpecReader#MAX_PROBLEMS} problems, and how many more there are: an answer stays small. */
    static List<Problem> bounded(List<Problem> problems) {
        int max = io.slipstream.api.spec.SpecReader.MAX_PROBLEMS;
        if (problems.size() <= max + 1) {
            return problems;
        }
        List<Problem> first = new ArrayList<>(problems.subList(0, max));
        first.add(new Problem("", "has " + (problems.size() - max) + " more problems; only the first " + max + " are listed"));
        return first;
    }

    private static void error(Context ctx, int status, String code, String message, List<Problem> problems) {
        ctx.status(status).json(new ErrorView(status, code, message, problems));
    }

    static String codeOf(int status) {
        return switch (status) {
            case 400 -> "BAD_REQUEST";
            case 401 -> "UNAUTHORIZED";
            case 403 -> "FORBIDDEN";
            case 404 -> "NOT_FOUND";
            case 405 -> "METHOD_NOT_ALLOWED";
            case 409 -> "CONFLICT";
            case 422 -> "UNPROCESSABLE";
            case 413, 414, 431 -> "TOO_LARGE";
            default -> status >= 500 ? "INTERNAL" : "ERROR";
        };
    }
}
