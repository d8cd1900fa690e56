package io.slipstream.server.control;

import io.slipstream.api.spec.IdentitySpec;
import io.slipstream.api.spec.SecretValue;
import io.slipstream.executor.IdentityToken;
import io.slipstream.model.RunRecord;
import io.slipstream.server.identity.IdentityTokens;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * Signs the identity tokens a run asks for ({@code spec.identity}): one per audience, for its attempt, handed to its
 * instances at launch and again, newly signed, when half their lifetime has passed ({@link IdentityRefresh}).
 */
public final class RunIdentity {
    private final IdentityTokens tokens;

    public RunIdentity(IdentityTokens tokens) {
        this.tokens = tokens;
    }

    /** What a run that asks for tokens reads when this server signs none (its reason: tenants see it). */
    static final String NO_ISSUER = "IdentityUnavailable: this server signs no identity tokens (identity.issuer is not set)";

    /** Why a run's tokens cannot be signed: no issuer is configured (any more). */
    static final class Unavailable extends Exception {
        Unavailable(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /**
     * The run's tokens signed at {@code now}, in the order of its audiences; none when it asks for none. A store that
     * cannot be read now is not a reason to fail the run: its exception passes (the cycle stops, and tries again).
     */
    List<IdentityToken> mint(RunRecord run, Instant now) throws Unavailable {
        IdentitySpec identity = run.spec().identity();
        if (identity == null) {
            return List.of();
        }
        if (!tokens.issuing()) {
            throw new Unavailable(NO_ISSUER, null);
        }
        IdentityTokens.Subject subject = new IdentityTokens.Subject(run.workspace(), run.job(), run.id().value(), run.attempt(),
                run.origin().submittedBy());
        List<IdentityToken> signed = new ArrayList<>(identity.audiences().size());
        for (int i = 0; i < identity.audiences().size(); i++) {
            String audience = identity.audiences().get(i);
            signed.add(new IdentityToken(audience, IdentityToken.fileOf(i), SecretValue.of(tokens.mint(subject, audience, identity.ttl(), now))));
        }
        return signed;
    }

    /** How long after they were signed a run's tokens are signed again: half their lifetime. */
    static Duration refreshAfter(IdentitySpec identity) {
        return identity.ttl().dividedBy(2);
    }
}
