package io.slipstream.server.control;

import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;

/** Waiting for work handed to other threads (launches) that must be waited for, whatever happens. */
final class Futures {
    private Futures() {
    }

    /**
     * The result of {@code work}, its exception rethrown as it was; an interrupt does not end the wait (the work goes
     * on, and what it did must be known), it is kept for the caller.
     */
    static <T> T await(Future<T> work) {
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return work.get();
                } catch (InterruptedException e) {
                    interrupted = true;
                } catch (ExecutionException e) {
                    if (e.getCause() instanceof RuntimeException runtime) {
                        throw runtime;
                    }
                    if (e.getCause() instanceof Error error) {
                        throw error;
                    }
                    throw new IllegalStateException(e.getCause());
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
