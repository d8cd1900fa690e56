package io.slipstream.executor.local.image;

import java.time.Duration;

/**
 * The local executor's images ({@code instances.imageRetention}, {@code instances.imagePullTimeout}).
 *
 * @param retention   an image no instance used for this long is removed (checked hourly)
 * @param pullTimeout a pull (copying the image as the run's uid) that takes longer is killed and fails
 */
public record ImageSettings(Duration retention, Duration pullTimeout) {
    public static final Duration MIN_RETENTION = Duration.ofHours(1);
    public static final ImageSettings DEFAULTS = new ImageSettings(ImageCache.DEFAULT_RETENTION, ImageCache.DEFAULT_PULL_TIMEOUT);

    public ImageSettings {
        if (retention.compareTo(MIN_RETENTION) < 0 || pullTimeout.isNegative() || pullTimeout.isZero()) {
            throw new IllegalArgumentException("bad image settings: retention " + retention + ", pull timeout " + pullTimeout);
        }
    }
}
