package io.slipstream.executor;

/** Which output of an instance to read. */
public enum LogStream {
    STDOUT,
    STDERR
}
