package io.slipstream.cli;

/** What {@code get -o} asks for: {@code table} (the default), {@code wide}, {@code name}, {@code json}, {@code yaml}, {@code jsonpath=EXPR}. */
public record GetFormat(Kind kind, JsonPath path) {
    public enum Kind {
        table, wide, name, json, yaml, jsonpath
    }

    public static GetFormat parse(String text) {
        String value = text == null ? "table" : text.strip();
        if (value.startsWith("jsonpath=") || value.startsWith("jsonpath ")) {
            return new GetFormat(Kind.jsonpath, JsonPath.compile(value.substring("jsonpath=".length())));
        }
        for (Kind kind : Kind.values()) {
            if (kind != Kind.jsonpath && kind.name().equals(value)) {
                return new GetFormat(kind, null);
            }
        }
        throw new CliException(CliException.REJECTED, "-o: '" + text + "' is not an output format; use table, wide, name, json, yaml or jsonpath=EXPR"
                + (value.equals("jsonpath") ? " (jsonpath needs an expression: -o jsonpath='{.items[*].id}')" : ""));
    }

    /** A table, with or without the wide columns. */
    public boolean tabular() {
        return kind == Kind.table || kind == Kind.wide;
    }

    /** JSON or YAML, as {@link Output#print} writes them; null for the other kinds. */
    public Output.Format document() {
        return switch (kind) {
            case json -> Output.Format.json;
            case yaml -> Output.Format.yaml;
            default -> null;
        };
    }
}
