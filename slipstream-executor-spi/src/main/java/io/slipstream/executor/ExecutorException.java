package io.slipstream.executor;

/** The executor could not do what it was asked (for example, the node named in a launch does not exist). */
public class ExecutorException extends RuntimeException {
    public ExecutorException(String message) {
        super(message);
    }

    public ExecutorException(String message, Throwable cause) {
        super(message, cause);
    }
}
