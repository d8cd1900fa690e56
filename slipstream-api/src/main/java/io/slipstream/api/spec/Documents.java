package io.slipstream.api.spec;

import io.slipstream.api.codec.DocumentParser;
import io.slipstream.api.problem.Problems;
import java.util.ArrayList;
import java.util.List;
import tools.jackson.databind.JsonNode;

/** Reads a whole input (one or many documents) and validates every document before anything is used. */
public final class Documents {
    private Documents() {
    }

    /**
     * All documents of {@code body}, validated; throws {@link io.slipstream.api.problem.InvalidInputException}
     * with every problem of every document (paths prefixed {@code documents[i].} when there are several).
     */
    public static List<Document<?>> readAll(byte[] body) {
        List<JsonNode> trees = DocumentParser.parse(body);
        Problems problems = new Problems();
        List<Document<?>> documents = new ArrayList<>();
        for (int i = 0; i < trees.size(); i++) {
            String prefix = trees.size() == 1 ? "" : "documents[" + i + "].";
            Document<?> document = SpecReader.read(trees.get(i), SpecReader.Mode.USER, prefix, problems);
            if (document != null) {
                documents.add(document);
            }
        }
        problems.throwIfAny(trees.size() == 1 ? "the document is invalid" : "some documents are invalid");
        return documents;
    }

    /** Reads one document that the server itself wrote earlier: as data ({@link StoredSpecs#read}), never validated. */
    public static Document<?> readStored(JsonNode tree) {
        return StoredSpecs.read(tree);
    }
}
