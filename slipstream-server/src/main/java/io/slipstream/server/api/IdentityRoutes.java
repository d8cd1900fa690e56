package io.slipstream.server.api;

import io.javalin.http.HandlerType;
import io.slipstream.server.identity.IdentityTokens;

/**
 * What anyone may fetch, without a token, to verify runs' identity tokens: the OpenID Connect discovery document and
 * the JSON Web Key Set it points to. An object store, a secret store or a cloud's token exchange reads them to trust
 * the tokens (docs/identity.md). Cached for a minute at most: a new key is published five minutes before it signs.
 */
final class IdentityRoutes {
    private final IdentityTokens tokens;

    IdentityRoutes(IdentityTokens tokens) {
        this.tokens = tokens;
    }

    private IdentityTokens enabled() {
        if (!tokens.enabled()) {
            throw ApiException.notFound("this server issues no identity tokens: its config sets no identity.issuer (docs/identity.md)");
        }
        return tokens;
    }

    void register(RouteTable r) {
        r.add(HandlerType.GET, IdentityTokens.DISCOVERY, ctx -> {
            String body = io.slipstream.api.codec.Json.mapper().writeValueAsString(enabled().discovery());
            ctx.header("Cache-Control", "public, max-age=60").contentType("application/json").result(body); // once it is built: no error is cached
        });
        r.add(HandlerType.GET, IdentityTokens.JWKS, ctx -> {
            String body = io.slipstream.api.codec.Json.mapper().writeValueAsString(enabled().jwks());
            ctx.header("Cache-Control", "public, max-age=60").contentType("application/jwk-set+json").result(body);
        });
    }
}
