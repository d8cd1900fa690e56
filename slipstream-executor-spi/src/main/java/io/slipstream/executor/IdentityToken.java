package io.slipstream.executor;

import static java.util.Objects.requireNonNull;

import io.slipstream.api.spec.SecretValue;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A signed identity token an instance holds for one audience of its job's {@code spec.identity}: a credential, written
 * as {@code file} where the instance reads it and replaced there before it expires ({@link Executor#refreshIdentity}).
 * The instance finds the first audience's file in {@value #TOKEN_FILE_ENV} and each one's in {@value #TOKENS_ENV}.
 *
 * @param file the file's name ({@link #fileOf}), never the audience, which may hold any printable character
 */
public record IdentityToken(String audience, String file, SecretValue token) {
    /** The path of the first audience's token file. */
    public static final String TOKEN_FILE_ENV = "SLIPSTREAM_IDENTITY_TOKEN_FILE";
    /** A JSON object: audience to the path of its token file. */
    public static final String TOKENS_ENV = "SLIPSTREAM_IDENTITY_TOKENS";
    private static final java.util.regex.Pattern FILE = java.util.regex.Pattern.compile("token-[0-9]{1,2}\\.jwt");

    public IdentityToken {
        requireNonNull(audience, "audience is null");
        requireNonNull(token, "token is null");
        if (file == null || !FILE.matcher(file).matches()) {
            throw new IllegalArgumentException("not a token file's name: " + file);
        }
    }

    /** The file of the {@code index}th audience's token ({@code token-0.jwt}). */
    public static String fileOf(int index) {
        return "token-" + index + ".jwt";
    }

    /**
     * What names the tokens in an instance's environment, when their files are in {@code dir} as the instance sees it
     * (empty without tokens).
     */
    public static Map<String, String> environment(String dir, List<IdentityToken> tokens) {
        if (tokens.isEmpty()) {
            return Map.of();
        }
        Map<String, String> paths = new LinkedHashMap<>();
        tokens.forEach(t -> paths.put(t.audience(), dir + "/" + t.file()));
        return Map.of(TOKEN_FILE_ENV, dir + "/" + tokens.get(0).file(), TOKENS_ENV, io.slipstream.api.codec.Json.mapper().writeValueAsString(paths));
    }

    /** The audience and file, never the token. */
    @Override
    public String toString() {
        return "IdentityToken[audience=" + audience + ", file=" + file + "]";
    }
}
