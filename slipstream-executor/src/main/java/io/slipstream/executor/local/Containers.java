package io.slipstream.executor.local;

import io.slipstream.api.run.RunId;
import io.slipstream.api.spec.JobSpec;
import io.slipstream.api.spec.NetworkMode;
import io.slipstream.api.spec.NodeGroupSpec;
import io.slipstream.executor.ExecutorException;
import io.slipstream.executor.LaunchSpec;
import io.slipstream.executor.NodeInfo;
import io.slipstream.executor.local.files.InstanceDirectory;
import io.slipstream.executor.local.image.ImageCache;
import io.slipstream.executor.local.image.ImageReference;
import io.slipstream.executor.local.image.ImageSettings;
import io.slipstream.executor.local.image.Sandbox;
import io.slipstream.executor.local.network.RunNetworks;
import io.slipstream.executor.local.storage.SharedStorage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the local executor adds for instances with an image ({@link ImageCache}, {@link Sandbox}) and for runs with
 * a network of their own ({@link RunNetworks}): what of a job it can run, a run's network, an instance's sandbox, and
 * the collection of images nothing uses (docs/containers.md).
 */
final class Containers {
    private static final Logger LOG = LoggerFactory.getLogger(Containers.class);
    /** Where the control plane tells instances the API is. */
    private static final String RUN_SERVER_ENV = "SLIPSTREAM_SERVER";

    /** Each private-network run's network namespace; {@code null} without isolation (only root can make them). */
    private final RunNetworks networks;
    private final Path imagesDir;
    private final ImageSettings settings;
    private final Clock clock;
    /** Where pulls run: never on a launch's thread. */
    private final Executor background;
    /** Made on the first instance with an image. */
    private ImageCache images;

    /**
     * @param root     the instances' root; images go next to it, in {@code images/}
     * @param isolated whether runs have uids of their own (the server is root): private networks need it
     */
    Containers(Path root, boolean isolated, ImageSettings settings, Clock clock, Executor background) {
        this.imagesDir = root.resolveSibling("images");
        this.settings = settings;
        this.clock = clock;
        this.background = background;
        try {
            this.networks = isolated ? new RunNetworks(root) : null;
        } catch (IOException e) {
            throw new ExecutorException("cannot prepare the runs' networks under " + root + ": " + e.getMessage(), e);
        }
    }

    /**
     * Images must be references this executor reads, on a machine with skopeo, umoci and bubblewrap; a private network
     * needs root (isolation) and ip, nsenter, socat.
     */
    Map<String, String> refusals(JobSpec job) {
        Map<String, String> refusals = new LinkedHashMap<>();
        String missingImageTools = ImageCache.missingTools();
        for (int i = 0; i < job.nodeGroups().size(); i++) {
            NodeGroupSpec group = job.nodeGroups().get(i);
            if (group.image() == null) {
                continue;
            }
            String problem = ImageReference.problem(group.image());
            if (problem != null) {
                refusals.put("nodeGroups[" + i + "].image", problem);
            } else if (missingImageTools != null) {
                refusals.put("nodeGroups[" + i + "].image", "this server's machine cannot run images: it lacks " + missingImageTools
                        + " (docs/containers.md)");
            }
        }
        if (job.networkMode() == NetworkMode.Private) {
            String missing = RunNetworks.missingTools();
            if (networks == null) {
                refusals.put("network", "Private needs a server that runs as root with isolation (docs/containers.md); say network: Host");
            } else if (missing != null) {
                refusals.put("network", "Private needs " + missing + " on the server's machine (docs/containers.md); say network: Host");
            }
        }
        return refusals;
    }

    /** The run's network namespace ({@code network: Private}), made if it is not there; {@code null} for the machine's. */
    Path networkOf(LaunchSpec spec) throws IOException {
        if (spec.network() != NetworkMode.Private) {
            return null;
        }
        if (networks == null) {
            throw new ExecutorException("instance " + spec.id() + " cannot start: a private network needs a server that runs as root with"
                    + " isolation (say network: Host)");
        }
        return networks.ensure(spec.id().runId(), spec.env().get(RUN_SERVER_ENV));
    }

    /**
     * The image, pulled and unpacked if needed (as the run's uid), the command checked in it, and bubblewrap's arguments
     * written; returns their file.
     *
     * @throws io.slipstream.executor.LaunchNotReadyException while the image is being pulled
     */
    Path prepareSandbox(LaunchSpec spec, NodeInfo node, InstanceDirectory dir, Integer uid, Integer gid, Path workingDir,
                        SharedStorage.Prepared shared, Path secretsDir, Path network) throws IOException {
        ImageReference reference;
        try {
            reference = ImageReference.parse(spec.image());
        } catch (IllegalArgumentException e) {
            throw new ExecutorException("instance " + spec.id() + " cannot start: image " + spec.image() + ": " + e.getMessage());
        }
        ImageCache.Image image;
        try {
            // Per tenant: what one workspace's run copied is never taken for what another's names (it wrote the copy).
            String tenant = spec.metadata() != null ? "workspace " + spec.metadata().workspace() : "run " + spec.id().runId();
            image = images().prepareInBackground(tenant, reference, uid, gid, background);
        } catch (IOException e) {
            throw new ExecutorException("instance " + spec.id() + " cannot start: " + e.getMessage(), e);
        }
        Sandbox sandbox = new Sandbox(dir, shared);
        Map<String, String> environment = onNetwork(InstanceEnvironment.inImage(spec, node, dir, shared, secretsDir, image, sandbox), network);
        String problem = Sandbox.commandProblem(image.rootfs(), spec.command().get(0), environment.getOrDefault("PATH", image.path()));
        if (problem != null) {
            throw new ExecutorException("instance " + spec.id() + " cannot start: " + problem + " (image " + spec.image() + ")");
        }
        dir.recordImage(image.digest());
        return dir.writeSandboxArguments(sandbox.arguments(image.rootfs(), hostname(spec.name()), workingDir, node, spec.gpus(), environment));
    }

    /** On a private network, the API is at the run's forwarder ({@link RunNetworks}). */
    static Map<String, String> onNetwork(Map<String, String> environment, Path network) {
        if (network != null && environment.containsKey(RUN_SERVER_ENV)) {
            environment.put(RUN_SERVER_ENV, RunNetworks.serverInside(environment.get(RUN_SERVER_ENV)));
        }
        return environment;
    }

    /** The instance's name as a host name (letters, digits and '-', at most 63). */
    static String hostname(String name) {
        String host = name.toLowerCase(java.util.Locale.ROOT).replaceAll("[^a-z0-9-]", "-").replaceAll("^-+|-+$", "");
        return host.isEmpty() ? "instance" : host.substring(0, Math.min(63, host.length()));
    }

    private synchronized ImageCache images() throws IOException {
        if (images == null) {
            images = new ImageCache(imagesDir, settings.pullTimeout(), clock);
        }
        return images;
    }

    /** Removes the images no instance used for the retention; the images of {@code watched} instances stay. */
    void collectImages(Collection<InstanceDirectory> watched) {
        ImageCache cache;
        synchronized (this) {
            cache = images;
        }
        if (cache == null && !Files.isDirectory(imagesDir)) {
            return;
        }
        try {
            Set<String> inUse = new HashSet<>();
            for (InstanceDirectory dir : watched) {
                String digest = dir.image();
                if (digest != null) {
                    inUse.add(digest);
                }
            }
            int removed = images().collect(inUse, settings.retention());
            if (removed > 0) {
                LOG.info("removed {} image(s) no instance used for {}", removed, settings.retention());
            }
        } catch (IOException | RuntimeException e) {
            LOG.warn("cannot collect unused images: {}", e.toString());
        }
    }

    /** The run's network goes with its files. */
    void forget(RunId run) {
        if (networks != null) {
            networks.remove(run);
        }
    }

    void close() {
        if (networks != null) {
            networks.close();
        }
    }
}
