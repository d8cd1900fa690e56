package io.slipstream.server.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class RouteTemplatesTest {
    private static final RouteTemplates TEMPLATES = RouteTemplates.of(List.of(new ApiServer.Route("GET", "/healthz"),
            new ApiServer.Route("GET", "/api/v1/runs"), new ApiServer.Route("GET", "/api/v1/runs/{run}"),
            new ApiServer.Route("POST", "/api/v1/runs/{run}/cancel"), new ApiServer.Route("GET", "/api/v1/workspaces/{workspace}/quotas/{quota}")));

    @ParameterizedTest
    @CsvSource({
            "GET, /healthz, /healthz",
            "GET, /api/v1/runs, /api/v1/runs",
            "GET, /api/v1/runs/, /api/v1/runs",
            "GET, /api/v1/runs/hello-12345678, /api/v1/runs/{run}",
            "POST, /api/v1/runs/hello-12345678/cancel, /api/v1/runs/{run}/cancel",
            "GET, /api/v1/runs/hello-12345678/cancel, /api/other",
            "GET, /api/v1/workspaces/a/quotas/b, /api/v1/workspaces/{workspace}/quotas/{quota}",
            "GET, /api/v1/workspaces/a/quotas/b/c, /api/other",
            "GET, /api/v1/runs/a.b, /api/v1/runs/{run}",
            "GET, /../../etc/passwd, other",
            "GET, /healthzz, other",
            "DELETE, /healthz, other",
    })
    void aPathIsLabelledByTheTemplateItMatchedNeverByItself(String method, String path, String label) {
        assertThat(TEMPLATES.of(method, path)).isEqualTo(label);
    }
}
