package io.slipstream.executor.local.image;

import io.slipstream.api.codec.Json;
import io.slipstream.executor.local.files.SafeFiles;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import tools.jackson.databind.JsonNode;

/**
 * The image cache's own files ({@link ImageCache}): the OCI layout's index ({@code layout/index.json}: which tag names
 * which manifest digest), and of each unpacked image ({@code rootfs/<hex>/}) its runtime config ({@code config.json}),
 * whether it is {@code complete}, and when it was {@code last-used}. skopeo and umoci write them, as the server, in
 * directories no run can change. What a run wrote is not read here as a file (the copy a pull leaves in its staging
 * area is taken through {@code files.PinnedFile}), but an image's config comes from whoever made the image: its
 * runtime config and the index are read without following links and with a bound on their size.
 */
final class ImageLayout {
    private static final String TAG_ANNOTATION = "org.opencontainers.image.ref.name";
    /** An image's runtime config: its environment, command and labels (a tenant's image may make it any size). */
    static final int MAX_CONFIG_BYTES = 4 << 20;
    /** The layout's index: a line per image this server has pulled. */
    static final int MAX_INDEX_BYTES = 16 << 20;

    private final Path index;

    /** @param layout the OCI layout's directory */
    ImageLayout(Path layout) {
        this.index = layout.resolve("index.json");
    }

    /** A manifest of the index: the tag it is named by ("" if none) and its digest. */
    record Tagged(String tag, String digest) {
    }

    /**
     * The digest of the manifest the index tags {@code tag}.
     *
     * @throws IOException if the index tags no manifest so (or cannot be read)
     */
    String digestOf(String tag) throws IOException {
        for (Tagged manifest : manifests()) {
            if (tag.equals(manifest.tag()) && manifest.digest().matches("sha256:[0-9a-f]{64}")) {
                return manifest.digest();
            }
        }
        throw new IOException("the image was imported but its tag " + tag + " is not in the layout");
    }

    /**
     * The digest the index tags {@code tag}, or {@code null} if it tags none (or cannot be read now: an import may be
     * rewriting it, and then the image is pulled as if it were not there).
     */
    String taggedDigest(String tag) {
        try {
            return Files.isRegularFile(index) ? digestOf(tag) : null;
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /** The index's manifests, in its order (none if there is no index yet). */
    List<Tagged> manifests() throws IOException {
        List<Tagged> manifests = new ArrayList<>();
        if (!Files.exists(index)) {
            return manifests;
        }
        for (JsonNode manifest : Json.mapper().readTree(read(index, MAX_INDEX_BYTES)).path("manifests")) {
            manifests.add(new Tagged(manifest.path("annotations").path(TAG_ANNOTATION).asString(""), manifest.path("digest").asString("")));
        }
        return manifests;
    }

    /** Whether {@code bundle} was unpacked completely. */
    static boolean complete(Path bundle) {
        return Files.isRegularFile(bundle.resolve("complete"), LinkOption.NOFOLLOW_LINKS);
    }

    /** Marks {@code bundle}, moved into place, as unpacked completely. */
    static void markComplete(Path bundle, String digest) throws IOException {
        Files.writeString(bundle.resolve("complete"), digest + "\n");
    }

    /** The environment the bundle's runtime config gives ({@code NAME=value}). */
    static List<String> env(Path bundle) throws IOException {
        JsonNode config = Json.mapper().readTree(read(bundle.resolve("config.json"), MAX_CONFIG_BYTES));
        List<String> env = new ArrayList<>();
        config.path("process").path("env").forEach(entry -> env.add(entry.asString()));
        return List.copyOf(env);
    }

    /** The file's text: a regular file, not a link, of at most {@code maxBytes}. */
    private static String read(Path file, int maxBytes) throws IOException {
        byte[] data = SafeFiles.readControlFile(file, maxBytes);
        if (data == null) {
            throw new java.nio.file.NoSuchFileException(file.toString());
        }
        return new String(data, StandardCharsets.UTF_8);
    }

    /** Marks the bundle used at {@code at}. */
    static void markUsed(Path bundle, Instant at) throws IOException {
        Files.setLastModifiedTime(Files.writeString(bundle.resolve("last-used"), ""), FileTime.from(at));
    }

    /** When the bundle was last used (or unpacked, if it never was). */
    static Instant lastUsed(Path bundle) throws IOException {
        Path used = bundle.resolve("last-used");
        return (Files.exists(used) ? Files.getLastModifiedTime(used) : Files.getLastModifiedTime(bundle)).toInstant();
    }
}
