package io.slipstream.api.problem;

import java.util.List;

/** Input was rejected; {@link #problems()} names every field at fault. Maps to HTTP 400 and CLI exit code 2. */
public final class InvalidInputException extends RuntimeException {
    private final List<Problem> problems;

    public InvalidInputException(String message, List<Problem> problems) {
        super(message, null, false, false);
        this.problems = List.copyOf(problems);
    }

    public InvalidInputException(String field, String message) {
        this("invalid input", List.of(new Problem(field, message)));
    }

    public List<Problem> problems() {
        return problems;
    }
}
