package io.slipstream.server.config;

import io.slipstream.api.problem.Problems;
import java.net.URI;
import java.net.URISyntaxException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code identity.issuer}: the URL that names the issuer of runs' identity tokens and under which relying parties
 * fetch its discovery document. One value for every replica (a load balancer's address, not a replica's own), absolute,
 * without a query or fragment; {@code https} in production (AWS STS and many others refuse anything else).
 */
final class IdentityIssuer {
    private static final Logger LOG = LoggerFactory.getLogger(IdentityIssuer.class);

    private IdentityIssuer() {
    }

    /** The issuer, or {@code null} (with a problem at {@code path}) if it is not one; {@link ServerConfig} drops a trailing slash. */
    static String check(String issuer, String path, Problems problems) {
        if (issuer == null) {
            return null;
        }
        URI uri;
        try {
            uri = new URI(issuer);
        } catch (URISyntaxException e) {
            problems.add(path, "must be a URL like https://slipstream.example.com (is '" + issuer + "')");
            return null;
        }
        if (!("https".equals(uri.getScheme()) || "http".equals(uri.getScheme())) || uri.getHost() == null || uri.getRawQuery() != null
                || uri.getRawFragment() != null || uri.getRawUserInfo() != null) {
            problems.add(path, "must be an http(s) URL with a host and no query, fragment or user, like https://slipstream.example.com (is '"
                    + issuer + "')");
            return null;
        }
        if ("http".equals(uri.getScheme())) {
            LOG.warn("identity.issuer is {}: many relying parties (AWS STS among them) accept only an https issuer", issuer);
        }
        return issuer;
    }
}
