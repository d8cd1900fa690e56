package io.slipstream.api.spec;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.time.Duration;
import java.util.List;

/**
 * The identity tokens a job's instances get (docs/identity.md): one signed token per audience, each in a file of the
 * instance, refreshed before it expires while the run runs.
 *
 * @param audiences whom the tokens are for (their {@code aud}: a Vault role's bound audience, {@code sts.amazonaws.com}),
 *                  1 to {@value #MAX_AUDIENCES}, each its own token; the first is the default one
 * @param ttl       how long each token is valid ({@code null} in a document: {@link #DEFAULT_TTL})
 */
public record IdentitySpec(List<String> audiences, Duration ttl) {
    public static final int MAX_AUDIENCES = 8;
    public static final Duration DEFAULT_TTL = Duration.ofHours(1);

    public IdentitySpec {
        audiences = List.copyOf(audiences);
        if (audiences.isEmpty() || audiences.size() > MAX_AUDIENCES) {
            throw new IllegalArgumentException("an identity has 1 to " + MAX_AUDIENCES + " audiences, not " + audiences.size());
        }
        java.util.Objects.requireNonNull(ttl, "ttl is null");
    }

    @JsonCreator
    public static IdentitySpec of(@JsonProperty("audiences") List<String> audiences, @JsonProperty("ttl") Duration ttl) {
        return new IdentitySpec(audiences == null ? List.of() : audiences, ttl == null ? DEFAULT_TTL : ttl);
    }
}
