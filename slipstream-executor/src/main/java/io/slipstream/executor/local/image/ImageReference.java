package io.slipstream.executor.local.image;

import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * A node group's {@code image} as the local executor reads it: a file or directory on this machine
 * ({@code oci-archive:/path}, {@code oci:/path[:tag]}, {@code docker-archive:/path}) or a registry reference
 * ({@code docker://name[:tag|@digest]}, or {@code name[:tag]} without a transport, as on Kubernetes). What it names is
 * read by skopeo as the run's own user (see {@link ImageCache}): a path the run cannot read cannot be pulled either.
 *
 * @param transport how skopeo reads it
 * @param location  the absolute path (with {@code :tag} for a layout) or the registry reference, without the transport
 */
public record ImageReference(Transport transport, String location) {
    /** The transports of skopeo this executor accepts. */
    public enum Transport {
        OCI_ARCHIVE("oci-archive:"),
        OCI_LAYOUT("oci:"),
        DOCKER_ARCHIVE("docker-archive:"),
        REGISTRY("docker://");

        private final String prefix;

        Transport(String prefix) {
            this.prefix = prefix;
        }

        /** Whether the location is a path on this machine. */
        public boolean local() {
            return this != REGISTRY;
        }
    }

    /** skopeo's other transports: named, so that the refusal says why rather than taking them for a registry. */
    private static final Set<String> UNSUPPORTED = Set.of("containers-storage", "dir", "docker-daemon", "ostree", "sif", "tarball", "atomic");
    private static final Pattern REGISTRY_NAME = Pattern.compile("[a-z0-9][a-z0-9._/:@+-]*");
    private static final Pattern TAG = Pattern.compile("[A-Za-z0-9_][A-Za-z0-9._-]{0,127}");

    /** Why {@code image} cannot be read, or {@code null} if it can (see {@link #parse}). */
    public static String problem(String image) {
        try {
            parse(image);
            return null;
        } catch (IllegalArgumentException e) {
            return e.getMessage();
        }
    }

    /** @throws IllegalArgumentException saying what is wrong with it */
    public static ImageReference parse(String image) {
        if (image == null || image.isBlank()) {
            throw new IllegalArgumentException("is empty");
        }
        if (image.chars().anyMatch(c -> c < 0x20 || c == 0x7f || Character.isWhitespace(c))) {
            throw new IllegalArgumentException("must not contain spaces or control characters");
        }
        for (Transport transport : Transport.values()) {
            if (image.startsWith(transport.prefix)) {
                String location = image.substring(transport.prefix.length());
                return transport.local() ? local(transport, location) : registry(location);
            }
        }
        int colon = image.indexOf(':');
        if (colon > 0 && UNSUPPORTED.contains(image.substring(0, colon))) {
            throw new IllegalArgumentException("transport '" + image.substring(0, colon) + "' is not supported (use oci-archive:, oci:,"
                    + " docker-archive: or docker://)");
        }
        return registry(image);
    }

    private static ImageReference local(Transport transport, String location) {
        String path = location;
        if (transport == Transport.OCI_LAYOUT) {
            int tag = location.lastIndexOf(':');
            if (tag >= 0) {
                path = location.substring(0, tag);
                if (!TAG.matcher(location.substring(tag + 1)).matches()) {
                    throw new IllegalArgumentException("'" + location.substring(tag + 1) + "' is not a tag (letters, digits, '_', '.', '-')");
                }
            }
        } else if (location.indexOf(':') >= 0) {
            // skopeo would read what follows as a reference inside the archive: one image per archive here.
            throw new IllegalArgumentException("an archive's path must not contain ':'");
        }
        if (!path.startsWith("/")) {
            throw new IllegalArgumentException("'" + path + "' is not an absolute path");
        }
        if (List.of(path.split("/")).contains("..")) {
            throw new IllegalArgumentException("'" + path + "' must not contain '..'");
        }
        return new ImageReference(transport, location);
    }

    private static ImageReference registry(String location) {
        if (!REGISTRY_NAME.matcher(location).matches() || location.length() > 512) {
            throw new IllegalArgumentException("'" + location + "' is not an image reference ([registry/]name[:tag][@digest], lower case)");
        }
        int slash = location.indexOf('/');
        String first = slash < 0 ? "" : location.substring(0, slash);
        boolean registryHost = first.contains(".") || first.contains(":") || first.equals("localhost");
        String host = registryHost ? first.replaceFirst(":[0-9]+$", "") : "";
        // The pull runs on this machine: its own services (the API, a cloud's metadata address) are no registry.
        if (host.equals("localhost") || host.startsWith("127.") || host.equals("0.0.0.0") || host.startsWith("169.254.") || host.startsWith("[")) {
            throw new IllegalArgumentException("registry '" + host + "' is an address of this machine or link-local: not pulled from");
        }
        return new ImageReference(Transport.REGISTRY, location);
    }

    /** The path on this machine skopeo reads (a layout's directory, without its tag); {@code null} for a registry. */
    public String path() {
        if (!transport.local()) {
            return null;
        }
        int tag = transport == Transport.OCI_LAYOUT ? location.lastIndexOf(':') : -1;
        return tag >= 0 ? location.substring(0, tag) : location;
    }

    /** The file whose change means the image changed: the archive, or a layout's {@code index.json}. */
    public String changeMarker() {
        return transport == Transport.OCI_LAYOUT ? path() + "/index.json" : path();
    }

    /** As skopeo takes it. */
    @Override
    public String toString() {
        return transport.prefix + location;
    }
}
