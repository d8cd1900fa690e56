package io.slipstream.server.config;

import java.nio.file.Path;

/**
 * Where the server's key material is: the secret key (seals Secrets; config {@code secrets.keyFile}, default
 * {@code <data dir>/secret.key}), the previous one while it is being rotated ({@code secrets.previousKeyFile}), and
 * the token pepper ({@code tokens.pepperFile}, default {@code <data dir>/token.pepper}). {@code null}: the default.
 */
public record KeyFiles(Path secretKey, Path previousSecretKey, Path tokenPepper) {
    public static final String SECRET_KEY_FILE = "secret.key";
    public static final String TOKEN_PEPPER_FILE = "token.pepper";
    public static final KeyFiles DEFAULTS = new KeyFiles(null, null, null);

    public Path secretKeyIn(Path dataDir) {
        return secretKey != null ? secretKey : dataDir.resolve(SECRET_KEY_FILE);
    }

    public Path tokenPepperIn(Path dataDir) {
        return tokenPepper != null ? tokenPepper : dataDir.resolve(TOKEN_PEPPER_FILE);
    }
}
