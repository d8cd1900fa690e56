package io.slipstream.server.secret;

import io.slipstream.api.spec.SecretValue;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.Base64;
import java.util.HexFormat;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * Seals and opens the values of Secrets with the server's key: AES-256-GCM, a random 96-bit nonce per value, and the
 * value's workspace, secret name and key as associated data, so a sealed value is accepted only in the row it was
 * sealed for (swapped between secrets or keys, it fails to open). A sealed value is the base64 of
 * {@code 0x01 || nonce(12) || ciphertext || tag(16)}. Safe for concurrent use.
 */
public final class SecretCipher {
    public static final int KEY_BYTES = 32;
    private static final byte FORMAT = 1;
    private static final int NONCE_BYTES = 12;
    private static final int TAG_BITS = 128;
    private static final SecureRandom RANDOM = new SecureRandom();

    private final SecretKeySpec key;
    private final String keyId;

    public SecretCipher(byte[] key) {
        if (key.length != KEY_BYTES) {
            throw new IllegalArgumentException("an AES-256 key has " + KEY_BYTES + " bytes, not " + key.length);
        }
        this.key = new SecretKeySpec(key.clone(), "AES");
        this.keyId = keyId("secrets", key);
    }

    /** Names a key without revealing it: {@code <purpose>-} and 16 hex digits of a SHA-256 of a label and the key. */
    public static String keyId(String purpose, byte[] key) {
        try {
            MessageDigest digest = MessageDigest.getInstance("SHA-256");
            digest.update(("slipstream key id\0" + purpose + "\0").getBytes(StandardCharsets.UTF_8));
            return purpose + "-" + HexFormat.of().formatHex(digest.digest(key), 0, 8);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }

    /** Which key this is (kept with every sealed value and in the store, to refuse another key). */
    public String keyId() {
        return keyId;
    }

    public String seal(String workspace, String secret, String valueKey, SecretValue value) {
        byte[] nonce = new byte[NONCE_BYTES];
        RANDOM.nextBytes(nonce);
        try {
            Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
            cipher.init(Cipher.ENCRYPT_MODE, key, new GCMParameterSpec(TAG_BITS, nonce));
            cipher.updateAAD(associatedData(workspace, secret, valueKey));
            byte[] sealed = cipher.doFinal(value.reveal().getBytes(StandardCharsets.UTF_8));
            ByteBuffer out = ByteBuffer.allocate(1 + NONCE_BYTES + sealed.length).put(FORMAT).put(nonce).put(sealed);
            return Base64.getEncoder().encodeToString(out.array());
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("AES-GCM failed", e);
        }
    }

    /**
     * Opens a value sealed for exactly this workspace, secret and key.
     *
     * @throws SecretUnreadableException if it was sealed with another key, for another row, or was altered
     */
    public SecretValue open(String workspace, String secret, String valueKey, String sealed) {
        byte[] bytes;
        try {
            bytes = Base64.getDecoder().decode(sealed);
        } catch (IllegalArgumentException e) {
            throw new SecretUnreadableException("a value of secret " + workspace + "/" + secret + " is not in the sealed format");
        }
        if (bytes.length < 1 + NONCE_BYTES + TAG_BITS / 8 || bytes[0] != FORMAT) {
            throw new SecretUnreadableException("a value of secret " + workspace + "/" + secret + " is not in the sealed format");
        }
        try {
            Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
            cipher.init(Cipher.DECRYPT_MODE, key, new GCMParameterSpec(TAG_BITS, bytes, 1, NONCE_BYTES));
            cipher.updateAAD(associatedData(workspace, secret, valueKey));
            byte[] plain = cipher.doFinal(bytes, 1 + NONCE_BYTES, bytes.length - 1 - NONCE_BYTES);
            try {
                return SecretValue.of(new String(plain, StandardCharsets.UTF_8));
            } finally {
                Arrays.fill(plain, (byte) 0);
            }
        } catch (javax.crypto.AEADBadTagException e) {
            throw new SecretUnreadableException("key " + valueKey + " of secret " + workspace + "/" + secret
                    + " does not open with key " + keyId + ": sealed with another key, or altered");
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("AES-GCM failed", e);
        }
    }

    private static byte[] associatedData(String workspace, String secret, String valueKey) {
        return ("slipstream/v1 Secret\0" + workspace + "\0" + secret + "\0" + valueKey).getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public String toString() {
        return "SecretCipher[" + keyId + "]";
    }

    /** A sealed value that cannot be opened with this key. */
    public static final class SecretUnreadableException extends RuntimeException {
        public SecretUnreadableException(String message) {
            super(message);
        }
    }
}
