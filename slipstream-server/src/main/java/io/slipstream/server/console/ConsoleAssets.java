package io.slipstream.server.console;

import io.javalin.http.Context;
import io.javalin.http.HandlerType;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;

/**
 * The web console: static files from the jar's {@code console/} folder, {@code index.html} at {@code /} and the rest
 * at {@code /console/NAME}. Not API routes (no token needed: the page asks for one and calls the API with it), so not
 * in the OpenAPI file. Every answer carries headers that keep hostile data inert: a CSP with no inline script or
 * style, no sniffing, no framing.
 */
public final class ConsoleAssets {
    /** Only plain file names of the kinds the console ships: nothing else of the class path can be read. */
    private static final Pattern NAME = Pattern.compile("[a-z0-9][a-z0-9-]{0,40}\\.(html|js|css|svg)");
    private static final Map<String, String> TYPES = Map.of("html", "text/html; charset=utf-8", "js", "text/javascript; charset=utf-8",
            "css", "text/css; charset=utf-8", "svg", "image/svg+xml");
    public static final String CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
            + "object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

    private final Map<String, byte[]> files = new ConcurrentHashMap<>();

    public void register(io.javalin.config.RoutesConfig routes) {
        // HEAD as GET (the server sends no body), so that a monitor's or a proxy's check sees the page's type and headers.
        for (HandlerType method : java.util.List.of(HandlerType.GET, HandlerType.HEAD)) {
            routes.addHttpHandler(method, "/", ctx -> serve(ctx, "index.html"));
            routes.addHttpHandler(method, "/console/{file}", ctx -> serve(ctx, ctx.pathParam("file")));
            routes.addHttpHandler(method, "/favicon.ico", ctx -> serve(ctx, "favicon.svg")); // what browsers ask for unprompted
        }
    }

    /** The content type of a console file's name, or null when it names none the console may serve. */
    static String typeOf(String name) {
        if (!NAME.matcher(name).matches()) {
            return null;
        }
        return TYPES.get(name.substring(name.lastIndexOf('.') + 1));
    }

    private void serve(Context ctx, String name) {
        headers(ctx);
        String type = typeOf(name);
        Optional<byte[]> bytes = type == null ? Optional.empty() : file(name);
        if (bytes.isEmpty()) {
            ctx.status(404).contentType("text/plain; charset=utf-8").result("no such console file");
            return;
        }
        // The page itself is never cached (a new release is seen on reload); the files it loads are revalidated.
        ctx.header("Cache-Control", name.equals("index.html") ? "no-store" : "no-cache");
        ctx.status(200).contentType(type).result(bytes.get());
    }

    /** A console file by its plain name; only files that exist are kept (a miss is not: anyone may ask for any name). */
    Optional<byte[]> file(String name) {
        byte[] cached = files.get(name);
        if (cached != null) {
            return Optional.of(cached);
        }
        Optional<byte[]> read = read(name);
        read.ifPresent(bytes -> files.putIfAbsent(name, bytes));
        return read;
    }

    int cached() {
        return files.size();
    }

    static void headers(Context ctx) {
        ctx.header("Content-Security-Policy", CSP);
        ctx.header("X-Content-Type-Options", "nosniff");
        ctx.header("X-Frame-Options", "DENY");
        ctx.header("Referrer-Policy", "no-referrer");
        ctx.header("Cross-Origin-Opener-Policy", "same-origin");
    }

    private static Optional<byte[]> read(String name) {
        try (InputStream in = ConsoleAssets.class.getResourceAsStream("/console/" + name)) {
            return in == null ? Optional.empty() : Optional.of(in.readAllBytes());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
