-- Secrets of workspaces. Their values are sealed by the server (AES-256-GCM under the server key named by key_id)
-- before they reach the store: data is a JSON object of key to the base64 of nonce, ciphertext and tag; no value
-- is ever here in clear. The keys themselves are not secret.
CREATE TABLE secrets (
    workspace  VARCHAR(63)  NOT NULL,
    name       VARCHAR(63)  NOT NULL,
    key_id     VARCHAR(64)  NOT NULL,
    data       TEXT         NOT NULL,
    version    BIGINT       NOT NULL,
    created_at TIMESTAMP WITH TIME ZONE NOT NULL,
    updated_at TIMESTAMP WITH TIME ZONE NOT NULL,
    PRIMARY KEY (workspace, name)
);

-- Which server key the data is protected with, per purpose ('secrets': the encryption key, 'tokens': the token
-- pepper): a server started with another key file refuses to start instead of reading garbage or refusing every token.
-- Only an id derived from the key is kept, never the key.
CREATE TABLE server_keys (
    purpose    VARCHAR(32)  NOT NULL PRIMARY KEY,
    key_id     VARCHAR(64)  NOT NULL,
    created_at TIMESTAMP WITH TIME ZONE NOT NULL
);

-- Token hashes become HMAC-SHA256 with the server's pepper; rows stored before keep 'sha256' until the server
-- upgrades them at its next start (it can: the new hash is the HMAC of the old one).
ALTER TABLE tokens ADD COLUMN hash_scheme VARCHAR(16) DEFAULT 'sha256' NOT NULL;
ALTER TABLE tokens ADD COLUMN last_used_at TIMESTAMP WITH TIME ZONE;
