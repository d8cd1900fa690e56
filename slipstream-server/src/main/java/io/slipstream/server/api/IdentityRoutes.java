package io.slipstream.server.api;

import io.javalin.http.HandlerType;
import io.slipstream.server.identity.IdentityTokens;

/**
 * What anyone may fetch, without a token, to verify runs' identity tokens: the OpenID Connect discovery document and
 * the JSON Web Key Set it points to. An object store, a secret store or a cloud's token exchange reads them to trust
 * the tokens (docs/identity.md). Cached for a minute at most: a new key is used as soon as it is made.
 */
final class IdentityRoutes {
    private final IdentityTokens tokens;

    IdentityRoutes(IdentityTokens tokens) {
        this.tokens = tokens;
    }

    void register(RouteTable r) {
        r.add(HandlerType.GET, IdentityTokens.DISCOVERY, ctx -> {
            ctx.header("Cache-Control", "public, max-age=60");
            ctx.json(tokens.discovery());
        });
        r.add(HandlerType.GET, IdentityTokens.JWKS, ctx -> {
            ctx.header("Cache-Control", "public, max-age=60");
            ctx.contentType("application/jwk-set+json").result(io.slipstream.api.codec.Json.mapper().writeValueAsString(tokens.jwks()));
        });
    }
}
