package io.slipstream.sdk;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The little JSON the SDK needs (the metadata file, the stop notice, progress reports), so that workloads get no
 * library with it: objects read as {@code Map<String, Object>} (in their order), arrays as {@code List<Object>},
 * numbers as {@link BigDecimal}, strings, booleans and {@code null}. Strict (RFC 8259): anything else is an
 * {@link IllegalArgumentException} naming its offset.
 */
final class MiniJson {
    private static final int MAX_DEPTH = 64;

    private final String text;
    private int at;

    private MiniJson(String text) {
        this.text = text;
    }

    static Object parse(String text) {
        MiniJson parser = new MiniJson(text);
        parser.space();
        Object value = parser.value(0);
        parser.space();
        if (parser.at != text.length()) {
            throw parser.error("unexpected text after the value");
        }
        return value;
    }

    /** {@code value} as JSON: a {@code Map} (string keys), {@code Iterable}, {@code CharSequence}, {@code Number}, {@code Boolean} or {@code null}. */
    static String write(Object value) {
        StringBuilder out = new StringBuilder();
        write(value, out);
        return out.toString();
    }

    private static void write(Object value, StringBuilder out) {
        if (value == null) {
            out.append("null");
        } else if (value instanceof Map<?, ?> map) {
            out.append('{');
            boolean first = true;
            for (Map.Entry<?, ?> entry : map.entrySet()) {
                if (!first) {
                    out.append(',');
                }
                first = false;
                string(String.valueOf(entry.getKey()), out);
                out.append(':');
                write(entry.getValue(), out);
            }
            out.append('}');
        } else if (value instanceof Iterable<?> items) {
            out.append('[');
            boolean first = true;
            for (Object item : items) {
                if (!first) {
                    out.append(',');
                }
                first = false;
                write(item, out);
            }
            out.append(']');
        } else if (value instanceof Double || value instanceof Float) {
            double number = ((Number) value).doubleValue();
            if (!Double.isFinite(number)) {
                throw new IllegalArgumentException("JSON has no " + number);
            }
            out.append(number == Math.rint(number) && Math.abs(number) < 1e15 ? Long.toString((long) number) + ".0" : Double.toString(number));
        } else if (value instanceof Number || value instanceof Boolean) {
            out.append(value);
        } else {
            string(value.toString(), out);
        }
    }

    private static void string(String text, StringBuilder out) {
        out.append('"');
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                case '\b' -> out.append("\\b");
                case '\f' -> out.append("\\f");
                default -> {
                    if (c < 0x20 || c == 0x2028 || c == 0x2029) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        out.append('"');
    }

    private Object value(int depth) {
        if (depth > MAX_DEPTH) {
            throw error("nested deeper than " + MAX_DEPTH);
        }
        if (at >= text.length()) {
            throw error("a value is missing");
        }
        char c = text.charAt(at);
        switch (c) {
            case '{':
                return object(depth);
            case '[':
                return array(depth);
            case '"':
                return string();
            case 't':
                return literal("true", Boolean.TRUE);
            case 'f':
                return literal("false", Boolean.FALSE);
            case 'n':
                return literal("null", null);
            default:
                if (c == '-' || (c >= '0' && c <= '9')) {
                    return number();
                }
                throw error("unexpected '" + c + "'");
        }
    }

    private Map<String, Object> object(int depth) {
        at++;
        Map<String, Object> map = new LinkedHashMap<>();
        space();
        if (peek() == '}') {
            at++;
            return map;
        }
        while (true) {
            space();
            if (peek() != '"') {
                throw error("expected a name in quotes");
            }
            String name = string();
            space();
            expect(':');
            space();
            Object value = value(depth + 1);
            if (map.containsKey(name)) {
                throw error("\"" + name + "\" is given twice");
            }
            map.put(name, value);
            space();
            if (peek() == ',') {
                at++;
            } else {
                expect('}');
                return map;
            }
        }
    }

    private List<Object> array(int depth) {
        at++;
        List<Object> list = new ArrayList<>();
        space();
        if (peek() == ']') {
            at++;
            return list;
        }
        while (true) {
            space();
            list.add(value(depth + 1));
            space();
            if (peek() == ',') {
                at++;
            } else {
                expect(']');
                return Collections.unmodifiableList(list);
            }
        }
    }

    private String string() {
        at++;
        StringBuilder out = new StringBuilder();
        while (true) {
            if (at >= text.length()) {
                throw error("a string does not end");
            }
            char c = text.charAt(at++);
            if (c == '"') {
                return out.toString();
            }
            if (c < 0x20) {
                throw error("a control character in a string");
            }
            if (c != '\\') {
                out.append(c);
                continue;
            }
            if (at >= text.length()) {
                throw error("a string does not end");
            }
            char escape = text.charAt(at++);
            switch (escape) {
                case '"', '\\', '/' -> out.append(escape);
                case 'n' -> out.append('\n');
                case 'r' -> out.append('\r');
                case 't' -> out.append('\t');
                case 'b' -> out.append('\b');
                case 'f' -> out.append('\f');
                case 'u' -> {
                    if (at + 4 > text.length()) {
                        throw error("a \\u escape is cut short");
                    }
                    try {
                        out.append((char) Integer.parseInt(text.substring(at, at + 4), 16));
                    } catch (NumberFormatException e) {
                        throw error("a \\u escape is not hexadecimal");
                    }
                    at += 4;
                }
                default -> throw error("unknown escape \\" + escape);
            }
        }
    }

    private BigDecimal number() {
        int start = at;
        if (peek() == '-') {
            at++;
        }
        if (peek() == '0') {
            at++;
        } else if (digits() == 0) {
            throw error("a number has no digits");
        }
        if (peek() == '.') {
            at++;
            if (digits() == 0) {
                throw error("a number has no digits after its point");
            }
        }
        if (peek() == 'e' || peek() == 'E') {
            at++;
            if (peek() == '+' || peek() == '-') {
                at++;
            }
            if (digits() == 0) {
                throw error("a number has no digits in its exponent");
            }
        }
        if (at - start > 100) {
            throw error("a number of more than 100 characters");
        }
        return new BigDecimal(text.substring(start, at));
    }

    private int digits() {
        int start = at;
        while (at < text.length() && text.charAt(at) >= '0' && text.charAt(at) <= '9') {
            at++;
        }
        return at - start;
    }

    private Object literal(String word, Object value) {
        if (!text.startsWith(word, at)) {
            throw error("unexpected '" + text.charAt(at) + "'");
        }
        at += word.length();
        return value;
    }

    private void space() {
        while (at < text.length() && (text.charAt(at) == ' ' || text.charAt(at) == '\t' || text.charAt(at) == '\n' || text.charAt(at) == '\r')) {
            at++;
        }
    }

    private char peek() {
        return at < text.length() ? text.charAt(at) : '\0';
    }

    private void expect(char c) {
        if (peek() != c) {
            throw error(at >= text.length() ? "the text ends before '" + c + "'" : "expected '" + c + "', not '" + text.charAt(at) + "'");
        }
        at++;
    }

    private IllegalArgumentException error(String problem) {
        return new IllegalArgumentException("not valid JSON at offset " + at + ": " + problem);
    }
}
