package io.slipstream.api.problem;

import java.util.ArrayList;
import java.util.List;

/** Collects every problem of an input so that a user sees all of them at once, not one per attempt. */
public final class Problems {
    private final List<Problem> problems = new ArrayList<>();

    public void add(String field, String message) {
        problems.add(new Problem(field, message));
    }

    public void addAll(List<Problem> more) {
        problems.addAll(more);
    }

    public boolean isEmpty() {
        return problems.isEmpty();
    }

    public List<Problem> list() {
        return List.copyOf(problems);
    }

    /** Throws {@link InvalidInputException} if anything was collected. */
    public void throwIfAny(String summary) {
        if (!problems.isEmpty()) {
            throw new InvalidInputException(summary, problems);
        }
    }
}
