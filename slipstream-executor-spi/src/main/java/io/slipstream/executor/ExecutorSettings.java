package io.slipstream.executor;

/**
 * An executor's settings, as its {@link ExecutorFactory} read them from the config file (or a test made them). Opaque
 * to the server, which only hands them back to the factory named by {@link #executor()}.
 */
public interface ExecutorSettings {
    /** The {@link ExecutorFactory#name()} of the factory that reads these and creates the executor from them. */
    String executor();
}
