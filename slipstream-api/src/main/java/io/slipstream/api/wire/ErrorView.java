package io.slipstream.api.wire;

import io.slipstream.api.problem.Problem;
import java.util.List;

/**
 * The body of every error response: an HTTP status, a stable machine code ({@code INVALID_INPUT}, {@code NOT_FOUND},
 * {@code CONFLICT}, ...), a sentence for people, and for rejected input every problem with its field path.
 */
public record ErrorView(int status, String code, String message, List<Problem> problems) {
}
