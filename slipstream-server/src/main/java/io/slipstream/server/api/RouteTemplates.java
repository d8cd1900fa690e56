package io.slipstream.server.api;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * Finds the route template a request path matched ({@code /api/v1/runs/{run}}), so that metrics are labelled by
 * route, never by raw path (ids and hostile paths would make a label per request). A path no route takes is
 * {@value #OTHER}; one of the API without a template (refused before routing) is {@value #OTHER_API}.
 */
final class RouteTemplates {
    static final String OTHER = "other";
    static final String OTHER_API = "/api/other";

    private record Template(String method, Pattern pattern, String path) {
    }

    private final List<Template> templates;

    private RouteTemplates(List<Template> templates) {
        this.templates = templates;
    }

    static RouteTemplates of(List<ApiServer.Route> routes) {
        List<Template> templates = new ArrayList<>();
        for (ApiServer.Route route : routes) {
            String regex = java.util.Arrays.stream(route.path().split("/", -1))
                    .map(part -> part.startsWith("{") && part.endsWith("}") ? "[^/]+" : Pattern.quote(part))
                    .collect(java.util.stream.Collectors.joining("/"));
            templates.add(new Template(route.method(), Pattern.compile(regex), route.path()));
        }
        return new RouteTemplates(List.copyOf(templates));
    }

    String of(String method, String path) {
        String trimmed = path.length() > 1 && path.endsWith("/") ? path.substring(0, path.length() - 1) : path;
        for (Template template : templates) {
            if (template.method().equals(method) && template.pattern().matcher(trimmed).matches()) {
                return template.path();
            }
        }
        return trimmed.startsWith("/api/") ? OTHER_API : OTHER;
    }
}
