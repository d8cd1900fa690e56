package io.slipstream.server.api;

import io.javalin.config.RoutesConfig;
import io.javalin.http.Handler;
import io.javalin.http.HandlerType;
import java.util.ArrayList;
import java.util.List;

/** Registers routes with Javalin and keeps the list of them (the OpenAPI drift tests and the metrics' labels read it). */
final class RouteTable {
    private final RoutesConfig config;
    private final List<ApiServer.Route> routes = new ArrayList<>();

    RouteTable(RoutesConfig config) {
        this.config = config;
    }

    void add(HandlerType method, String path, Handler handler) {
        routes.add(new ApiServer.Route(method.name(), path));
        config.addHttpHandler(method, path, handler);
    }

    List<ApiServer.Route> routes() {
        return List.copyOf(routes);
    }
}
