package io.slipstream.api.codec;

import io.slipstream.api.problem.Problem;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.snakeyaml.engine.v2.api.LoadSettings;
import org.snakeyaml.engine.v2.api.lowlevel.Parse;
import org.snakeyaml.engine.v2.events.AliasEvent;
import org.snakeyaml.engine.v2.events.CollectionStartEvent;
import org.snakeyaml.engine.v2.events.Event;
import org.snakeyaml.engine.v2.events.NodeEvent;
import org.snakeyaml.engine.v2.events.ScalarEvent;
import org.snakeyaml.engine.v2.exceptions.Mark;
import org.snakeyaml.engine.v2.exceptions.YamlEngineException;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.core.TokenStreamContext;
import tools.jackson.core.TokenStreamLocation;
import tools.jackson.core.json.JsonFactory;

/**
 * Checks the structure of untrusted input before it becomes a tree, which would hide what is wrong: a key given twice
 * (a tree keeps one of them), and in YAML an alias, an explicit tag, or a key that is a list or a map. Every finding
 * is named by the field path it is at ({@code spec.nodeGroups[0].env.LR}, with {@code documents[i].} in front when
 * the input holds several documents) and its line and column; all are reported at once, up to {@link #MAX_FINDINGS}.
 *
 * <p>Tags: only {@code !!str} (and the non-specific {@code !}) on a scalar, which make it a string, and {@code !!map}
 * and {@code !!seq} on what they name, are accepted. Every other tag, the other core-schema ones included, is refused:
 * Jackson ignores most tags, or applies them halfway ({@code !!int abc} stays a string, {@code !!null x} is null), so
 * the value read would not be the value written.
 */
final class StructureChecks {
    static final int MAX_FINDINGS = 100;
    /** The reader's nesting limit, and one more for a list at the top that holds documents (the parser refuses deeper). */
    private static final int MAX_YAML_NESTING = Json.READ_LIMITS.getMaxNestingDepth() + 1;

    private static final String STR = "tag:yaml.org,2002:str";
    private static final String MAP = "tag:yaml.org,2002:map";
    private static final String SEQ = "tag:yaml.org,2002:seq";

    private StructureChecks() {
    }

    /** One thing found, in the {@code document}-th document (counting from 0) at {@code path} within it. */
    private record Finding(int document, String path, String message) {
    }

    /** What was found, as problems; documents are named only when there are several (as {@code Documents} names them). */
    private static List<Problem> problems(List<Finding> findings, int documents) {
        List<Problem> problems = new ArrayList<>();
        for (Finding finding : findings) {
            String prefix = documents == 1 ? "" : "documents[" + finding.document() + "]";
            String field = prefix.isEmpty() ? finding.path() : finding.path().isEmpty() ? prefix
                    : finding.path().startsWith("[") ? prefix + finding.path() : prefix + "." + finding.path();
            problems.add(new Problem(field, finding.message()));
        }
        return problems;
    }

    /**
     * Duplicate keys of JSON {@code text}, which is otherwise valid (it was checked by a parser first). A JSON array at
     * the top holds documents, as {@link DocumentParser#parse} reads it.
     */
    static List<Problem> json(JsonFactory factory, String text) {
        List<Finding> findings = new ArrayList<>();
        Deque<Set<String>> keys = new ArrayDeque<>();
        boolean rootArray = false;
        int documents = 0;
        int depth = 0;
        try (JsonParser parser = factory.createParser(text)) {
            for (JsonToken token = parser.nextToken(); token != null; token = parser.nextToken()) {
                if (depth == 0 && token == JsonToken.START_ARRAY) {
                    rootArray = true;
                } else if (depth == 1 && rootArray && (token.isStructStart() || token.isScalarValue())) {
                    documents++;
                }
                if (token.isStructStart()) {
                    depth++;
                } else if (token.isStructEnd()) {
                    depth--;
                }
                if (token == JsonToken.START_OBJECT) {
                    keys.push(new HashSet<>());
                } else if (token == JsonToken.END_OBJECT) {
                    keys.pop();
                } else if (token == JsonToken.PROPERTY_NAME && !keys.peek().add(parser.currentName()) && findings.size() < MAX_FINDINGS) {
                    TokenStreamContext context = parser.streamReadContext();
                    findings.add(new Finding(rootArray ? documentIndex(context) : 0, pathOf(context, rootArray),
                            "is given twice" + at(parser.currentTokenLocation()) + ": a key may appear only once"));
                }
            }
        }
        return problems(findings, rootArray ? documents : 1);
    }

    /** The index in the top-level array of the document that {@code context} is in. */
    private static int documentIndex(TokenStreamContext context) {
        TokenStreamContext top = context;
        while (top.getParent() != null && !top.getParent().inRoot()) {
            top = top.getParent();
        }
        return Math.max(top.getCurrentIndex(), 0);
    }

    /** The field path of the current position, without the top-level array's index when it holds documents. */
    private static String pathOf(TokenStreamContext context, boolean rootArray) {
        List<TokenStreamContext> chain = new ArrayList<>();
        for (TokenStreamContext c = context; c != null && !c.inRoot(); c = c.getParent()) {
            chain.add(0, c);
        }
        StringBuilder path = new StringBuilder();
        for (int i = rootArray ? 1 : 0; i < chain.size(); i++) {
            TokenStreamContext c = chain.get(i);
            if (c.inArray()) {
                path.append('[').append(Math.max(c.getCurrentIndex(), 0)).append(']');
            } else if (c.currentName() != null) {
                path.append(path.length() == 0 ? "" : ".").append(c.currentName());
            }
        }
        return path.toString();
    }

    private static String at(TokenStreamLocation location) {
        if (location == null || location.getLineNr() < 1) {
            return "";
        }
        return " (line " + location.getLineNr() + ", column " + location.getColumnNr() + ")";
    }

    /**
     * Aliases, tags, keys that are not scalars and duplicate keys of YAML {@code text}. Throws the parser's exception
     * if the text is not YAML at all; the caller reports it.
     *
     * @param listsHoldDocuments whether a YAML document that is a list holds documents (as in a file of documents), or
     *                           is one value (as an override's)
     */
    static YamlResult yaml(LoadSettings settings, String text, boolean listsHoldDocuments) {
        YamlWalk walk = new YamlWalk(listsHoldDocuments);
        Iterator<Event> events = new Parse(settings).parseString(text).iterator();
        while (true) {
            Event event;
            try {
                if (!events.hasNext()) {
                    break;
                }
                event = events.next();
            } catch (YamlEngineException e) {
                throw e;
            } catch (RuntimeException e) {
                // SnakeYAML's own failures on some malformed input: a cut-short "\x" escape is a NumberFormatException.
                throw new YamlEngineException("a malformed escape sequence or scalar", e);
            }
            walk.on(event);
            if (walk.frames.size() > MAX_YAML_NESTING) { // each level keeps its path: unbounded depth is quadratic memory
                throw new YamlEngineException("the document is nested more than " + Json.READ_LIMITS.getMaxNestingDepth() + " levels deep"
                        + event.getStartMark().map(m -> " (line " + (m.getLine() + 1) + ", column " + (m.getColumn() + 1) + ")").orElse(""));
            }
        }
        return new YamlResult(problems(walk.findings, walk.documents), walk.documents);
    }

    /** What {@link #yaml} found, and how many documents that are not empty the stream holds. */
    record YamlResult(List<Problem> problems, int documents) {
    }

    /** Follows the events of a YAML stream, keeping the path of each node. */
    private static final class YamlWalk {
        final List<Finding> findings = new ArrayList<>();
        final Deque<Frame> frames = new ArrayDeque<>();
        final boolean listsHoldDocuments;
        /** Documents seen so far: a YAML document that is not empty is one, or each item of one that is a list. */
        int documents;

        YamlWalk(boolean listsHoldDocuments) {
            this.listsHoldDocuments = listsHoldDocuments;
        }

        /** An open mapping or sequence: its path, and where in it the next node goes. */
        private static final class Frame {
            final boolean mapping;
            final String path;
            /** The document it is in; -1 for a list at the top of a YAML document, whose items are documents. */
            final int document;
            /** Inside a key that is itself a list or a map: nothing in it has a field path. */
            final boolean inKey;
            final Set<String> keys = new HashSet<>();
            boolean atKey = true;
            String key;
            int index;

            Frame(boolean mapping, String path, int document, boolean inKey) {
                this.mapping = mapping;
                this.path = path;
                this.document = document;
                this.inKey = inKey;
            }
        }

        void on(Event event) {
            switch (event.getEventId()) {
                case DocumentStart -> frames.clear();
                case Scalar, Alias, MappingStart, SequenceStart -> node((NodeEvent) event);
                case MappingEnd, SequenceEnd -> {
                    frames.pop();
                    completed();
                }
                default -> {
                }
            }
        }

        private void node(NodeEvent event) {
            Frame parent = frames.peek();
            boolean isKey = parent != null && parent.mapping && parent.atKey;
            boolean inKey = parent != null && (parent.inKey || isKey);
            int document;
            String path;
            if (parent == null) {
                boolean holdsDocuments = listsHoldDocuments && event.getEventId() == Event.ID.SequenceStart;
                document = holdsDocuments ? -1 : isNull(event) ? documents : documents++;
                path = "";
            } else if (parent.document < 0) {
                document = documents++;
                path = "";
            } else {
                document = parent.document;
                path = !isKey ? childPath(parent)
                        : event instanceof ScalarEvent scalar && !parent.inKey ? join(parent.path, scalar.getValue()) : parent.path;
            }
            if (isKey && event instanceof ScalarEvent scalar && scalar.getValue().length() > Json.READ_LIMITS.getMaxNameLength()) {
                // Before its path is made: every node under it would copy it (the parser refuses such a name later).
                throw new YamlEngineException("a key is longer than " + Json.READ_LIMITS.getMaxNameLength() + " characters" + at(event));
            }
            if (event instanceof AliasEvent alias) {
                add(document, path, "uses the YAML alias *" + alias.getAlias().getValue() + at(event) + ": aliases and anchors are not supported");
            }
            Optional<String> tag = event instanceof ScalarEvent scalar ? scalar.getTag()
                    : event instanceof CollectionStartEvent collection ? collection.getTag() : Optional.empty();
            if (tag.isPresent() && !allowed(tag.get(), event)) {
                add(document, path, "has the YAML tag " + shown(tag.get()) + at(event) + ": tags are not supported (only !!str, to make a scalar a string)");
            }
            if (isKey && event instanceof CollectionStartEvent) {
                add(document, parent.path, "has a key that is a list or a map" + at(event) + ": keys must be plain names");
            } else if (isKey && event instanceof ScalarEvent scalar && !parent.inKey) {
                parent.key = scalar.getValue();
                if (!parent.keys.add(scalar.getValue())) {
                    add(document, path, "is given twice" + at(event) + ": a key may appear only once");
                }
            }
            switch (event.getEventId()) {
                case MappingStart -> frames.push(new Frame(true, path, document, inKey));
                case SequenceStart -> frames.push(new Frame(false, path, document, inKey));
                default -> completed();
            }
        }

        /** A node of the top frame is complete: move on to the next key, value or item. */
        private void completed() {
            Frame frame = frames.peek();
            if (frame == null) {
                return;
            }
            if (frame.mapping) {
                frame.atKey = !frame.atKey;
            } else {
                frame.index++;
            }
        }

        private static String childPath(Frame parent) {
            if (parent.mapping) {
                return join(parent.path, parent.key == null ? "?" : parent.key);
            }
            return parent.path + "[" + parent.index + "]";
        }

        private static String join(String path, String key) {
            return path.isEmpty() ? key : path + "." + key;
        }

        private void add(int document, String path, String message) {
            if (findings.size() < MAX_FINDINGS) {
                findings.add(new Finding(Math.max(document, 0), path, message));
            }
        }

        /** Whether a YAML document's root is empty or null, which the parser skips (so it is no document). */
        private static boolean isNull(NodeEvent event) {
            return event instanceof ScalarEvent scalar && scalar.isPlain() && scalar.getTag().isEmpty()
                    && (scalar.getValue().isEmpty() || scalar.getValue().equals("null"));
        }

        private static boolean allowed(String tag, NodeEvent event) {
            return switch (event.getEventId()) {
                case Scalar -> tag.equals("!") || tag.equals(STR);
                case MappingStart -> tag.equals(MAP);
                case SequenceStart -> tag.equals(SEQ);
                default -> false;
            };
        }

        private static String shown(String tag) {
            return tag.startsWith("tag:yaml.org,2002:") ? "!!" + tag.substring("tag:yaml.org,2002:".length()) : tag.startsWith("!") ? tag : "!<" + tag + ">";
        }

        private static String at(Event event) {
            Optional<Mark> mark = event.getStartMark();
            return mark.map(m -> " (line " + (m.getLine() + 1) + ", column " + (m.getColumn() + 1) + ")").orElse("");
        }
    }
}
