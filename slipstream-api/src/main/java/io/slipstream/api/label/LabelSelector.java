package io.slipstream.api.label;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * A label selector in kubectl's syntax: requirements joined by commas (all must hold): {@code k=v}, {@code k==v},
 * {@code k!=v}, {@code k in (a,b)}, {@code k notin (a,b)}, {@code k} (has the key), {@code !k} (has not). The empty
 * selector selects everything. Keys and values follow {@link Labels}' rules. {@link #parse} is pure; a selector it
 * cannot read throws {@link Invalid} saying where and why.
 */
public record LabelSelector(List<Requirement> requirements) {
    /** Bounds the store's query: each requirement is a subquery. */
    public static final int MAX_REQUIREMENTS = 32;
    public static final int MAX_VALUES = 64;
    public static final int MAX_LENGTH = 8192;
    public static final LabelSelector EVERYTHING = new LabelSelector(List.of());

    public LabelSelector {
        requirements = List.copyOf(requirements);
    }

    public boolean isEmpty() {
        return requirements.isEmpty();
    }

    /** Whether an object with {@code labels} is selected. */
    public boolean matches(Map<String, String> labels) {
        Map<String, String> given = labels == null ? Map.of() : labels;
        return requirements.stream().allMatch(r -> r.matches(given));
    }

    @Override
    public String toString() {
        return String.join(",", requirements.stream().map(Requirement::toString).toList());
    }

    /** A selector that cannot be read; the message says what is wrong, in the user's words. */
    public static final class Invalid extends RuntimeException {
        public Invalid(String message) {
            super(message, null, false, false);
        }
    }

    /** Reads {@code text}; {@code null} or blank selects everything. */
    public static LabelSelector parse(String text) {
        if (text == null || text.isBlank()) {
            return EVERYTHING;
        }
        if (text.length() > MAX_LENGTH) {
            throw new Invalid("must be at most " + MAX_LENGTH + " characters (is " + text.length() + ")");
        }
        return new Parser(text).selector();
    }

    /** A hand-written recursive descent over kubectl's tokens: identifiers, = == != ! ( ) , and the words in, notin. */
    private static final class Parser {
        private final String text;
        private int at;

        Parser(String text) {
            this.text = text;
        }

        LabelSelector selector() {
            List<Requirement> requirements = new ArrayList<>();
            while (true) {
                requirements.add(requirement());
                skipSpace();
                if (at == text.length()) {
                    break;
                }
                expect(",", "',' between requirements");
            }
            if (requirements.size() > MAX_REQUIREMENTS) {
                throw new Invalid("must have at most " + MAX_REQUIREMENTS + " requirements (has " + requirements.size() + ")");
            }
            return new LabelSelector(requirements);
        }

        private Requirement requirement() {
            skipSpace();
            if (peek("!") && !peek("!=")) {
                at++;
                return new Requirement.NotExists(key());
            }
            String key = key();
            skipSpace();
            if (at == text.length() || peek(",")) {
                return new Requirement.Exists(key);
            }
            if (peek("==") || peek("=") || peek("!=")) {
                boolean negated = peek("!=");
                at += peek("==") || negated ? 2 : 1;
                skipSpace();
                String value = peekIdentifier() ? value(identifier()) : ""; // k= selects the empty value, as in kubectl
                return negated ? new Requirement.NotIn(key, new TreeSet<>(List.of(value))) : new Requirement.In(key, new TreeSet<>(List.of(value)));
            }
            int wordAt = at;
            String word = peekIdentifier() ? identifier() : "";
            if (word.equals("in") || word.equals("notin")) {
                TreeSet<String> values = set(word);
                return word.equals("in") ? new Requirement.In(key, values) : new Requirement.NotIn(key, values);
            }
            if (peekAt(wordAt, "<") || peekAt(wordAt, ">")) {
                throw new Invalid(where(wordAt) + "'<' and '>' are not supported: use =, ==, !=, in, notin, a key alone or !key");
            }
            throw new Invalid(where(wordAt) + "expected =, ==, !=, in or notin after the key '" + key + "' (or ',' to end the requirement)");
        }

        private TreeSet<String> set(String operator) {
            skipSpace();
            expect("(", "'(' after '" + operator + "'");
            TreeSet<String> values = new TreeSet<>();
            skipSpace();
            if (peek(")")) {
                throw new Invalid(where(at) + "the values of '" + operator + "' must not be empty");
            }
            while (true) {
                skipSpace();
                values.add(peekIdentifier() ? value(identifier()) : "");
                skipSpace();
                if (peek(")")) {
                    at++;
                    break;
                }
                if (at == text.length()) {
                    throw new Invalid(where(at) + "')' expected to close the values of '" + operator + "'");
                }
                expect(",", "',' or ')' in the values of '" + operator + "'");
            }
            if (values.size() > MAX_VALUES) {
                throw new Invalid("'" + operator + "' may list at most " + MAX_VALUES + " values (has " + values.size() + ")");
            }
            return values;
        }

        private String key() {
            skipSpace();
            int start = at;
            if (!peekIdentifier()) {
                throw new Invalid(where(start) + (at == text.length() ? "a label key is missing at the end" : "a label key expected, not '" + text.charAt(at) + "'"));
            }
            String key = identifier();
            if (key.equals("in") || key.equals("notin")) {
                throw new Invalid(where(start) + "a label key expected, not the operator '" + key + "'");
            }
            String problem = Labels.keyProblem(key);
            if (problem != null) {
                throw new Invalid(where(start) + problem);
            }
            return key;
        }

        private String value(String value) {
            String problem = Labels.valueProblem(value);
            if (problem != null) {
                throw new Invalid(where(at - value.length()) + problem);
            }
            return value;
        }

        private String identifier() {
            int start = at;
            while (at < text.length() && !special(text.charAt(at))) {
                at++;
            }
            return text.substring(start, at);
        }

        private boolean peekIdentifier() {
            return at < text.length() && !special(text.charAt(at));
        }

        private static boolean special(char c) {
            return Character.isWhitespace(c) || "!=,()<>".indexOf(c) >= 0;
        }

        private void expect(String token, String what) {
            if (!peek(token)) {
                throw new Invalid(where(at) + what + " expected" + (at == text.length() ? " at the end" : ", not '" + text.charAt(at) + "'"));
            }
            at += token.length();
        }

        private boolean peek(String token) {
            return peekAt(at, token);
        }

        private boolean peekAt(int index, String token) {
            return text.startsWith(token, index);
        }

        private void skipSpace() {
            while (at < text.length() && Character.isWhitespace(text.charAt(at))) {
                at++;
            }
        }

        private String where(int index) {
            return "at character " + (index + 1) + ": ";
        }
    }
}
