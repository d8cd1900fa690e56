package io.slipstream.executor;

/**
 * An instance that cannot start yet, for a reason that passes by itself (its image is still being pulled and
 * unpacked): nothing of it was started. The control plane launches it again at a later cycle, without counting a
 * failure; a launch that can never succeed throws {@link ExecutorException} instead.
 */
public final class LaunchNotReadyException extends RuntimeException {
    public LaunchNotReadyException(String message) {
        super(message, null, false, false);
    }
}
