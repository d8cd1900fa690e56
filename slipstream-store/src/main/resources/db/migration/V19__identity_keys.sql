-- The keys the server signs runs' identity tokens with (OIDC workload identity): the private half sealed with the
-- server's secrets key, the public half as the JSON Web Key the server publishes. Removed once no token they signed
-- can still be valid.
CREATE TABLE identity_keys (
    kid         VARCHAR(64)  NOT NULL PRIMARY KEY,
    created_at  TIMESTAMP WITH TIME ZONE NOT NULL,
    private_key TEXT         NOT NULL,
    public_jwk  TEXT         NOT NULL
);
