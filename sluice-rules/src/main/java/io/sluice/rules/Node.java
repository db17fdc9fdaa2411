package io.sluice.rules;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A parsed YAML or JSON value that remembers where it was written and under which dotted path, so every
 * error can name the file, line, column and field. Jackson's own tree ({@link JsonNode}) drops locations,
 * hence this small one. A member's location is that of its key; an item's that of its value.
 */
final class Node {

    enum Kind { OBJECT, ARRAY, STRING, INTEGER, DECIMAL, BOOLEAN, NULL }

    private final Kind kind;
    private final Object value;
    private final String source;
    private final String path;
    private final int line;
    private final int column;

    private Node(Kind kind, Object value, String source, String path, int line, int column) {
        this.kind = kind;
        this.value = value;
        this.source = source;
        this.path = path;
        this.line = line;
        this.column = column;
    }

    /**
     * Reads the value at the parser's current token (and everything nested in it).
     *
     * @param path the dotted path of this value; empty for a document's root
     */
    static Node read(JsonParser p, String source, String path, JsonLocation at) throws IOException, RuleFileException {
        int line = at.getLineNr() > 0 ? at.getLineNr() : 0;
        int column = at.getColumnNr() > 0 ? at.getColumnNr() : 0;
        JsonToken token = p.currentToken();
        switch (token) {
            case START_OBJECT: {
                Map<String, Node> members = new LinkedHashMap<>();
                while (p.nextToken() == JsonToken.FIELD_NAME) {
                    String name = p.currentName();
                    JsonLocation keyAt = p.currentTokenLocation();
                    String childPath = path.isEmpty() ? name : path + "." + name;
                    wellFormed(name, source, keyAt.getLineNr(), keyAt.getColumnNr(), childPath);
                    if (members.containsKey(name)) {
                        throw new RuleFileException(source, keyAt.getLineNr(), keyAt.getColumnNr(), childPath,
                                "appears twice; each field may be given once");
                    }
                    p.nextToken();
                    members.put(name, read(p, source, childPath, keyAt));
                }
                return new Node(Kind.OBJECT, Collections.unmodifiableMap(members), source, path, line, column);
            }
            case START_ARRAY: {
                List<Node> items = new ArrayList<>();
                while (p.nextToken() != JsonToken.END_ARRAY) {
                    items.add(read(p, source, path + "[" + items.size() + "]", p.currentTokenLocation()));
                }
                return new Node(Kind.ARRAY, Collections.unmodifiableList(items), source, path, line, column);
            }
            case VALUE_STRING:
                return new Node(Kind.STRING, wellFormed(p.getText(), source, line, column, path), source, path, line,
                        column);
            case VALUE_NUMBER_INT:
                return new Node(Kind.INTEGER, p.getBigIntegerValue(), source, path, line, column);
            case VALUE_NUMBER_FLOAT:
                return new Node(Kind.DECIMAL, p.getDecimalValue(), source, path, line, column);
            case VALUE_TRUE:
            case VALUE_FALSE:
                return new Node(Kind.BOOLEAN, token == JsonToken.VALUE_TRUE, source, path, line, column);
            case VALUE_NULL:
                return new Node(Kind.NULL, null, source, path, line, column);
            default:
                throw new RuleFileException(source, line, column, path, "expected a map, a list, a string, a number"
                        + " or a boolean; was " + token);
        }
    }

    /** The same tree for a {@link JsonNode}, every value placed on {@code line} (a line of a JSON-lines file). */
    static Node of(JsonNode n, String source, String path, int line) throws RuleFileException {
        if (n.isObject()) {
            Map<String, Node> members = new LinkedHashMap<>();
            for (Iterator<Map.Entry<String, JsonNode>> it = n.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> e = it.next();
                wellFormed(e.getKey(), source, line, 0, path + "." + e.getKey());
                members.put(e.getKey(), of(e.getValue(), source, path + "." + e.getKey(), line));
            }
            return new Node(Kind.OBJECT, Collections.unmodifiableMap(members), source, path, line, 0);
        }
        if (n.isArray()) {
            List<Node> items = new ArrayList<>();
            for (JsonNode item : n) {
                items.add(of(item, source, path + "[" + items.size() + "]", line));
            }
            return new Node(Kind.ARRAY, Collections.unmodifiableList(items), source, path, line, 0);
        }
        if (n.isTextual()) {
            return new Node(Kind.STRING, wellFormed(n.textValue(), source, line, 0, path), source, path, line, 0);
        }
        if (n.isIntegralNumber()) {
            return new Node(Kind.INTEGER, n.bigIntegerValue(), source, path, line, 0);
        }
        if (n.isNumber()) {
            return new Node(Kind.DECIMAL, n.decimalValue(), source, path, line, 0);
        }
        if (n.isBoolean()) {
            return new Node(Kind.BOOLEAN, n.booleanValue(), source, path, line, 0);
        }
        if (n.isNull()) {
            return new Node(Kind.NULL, null, source, path, line, 0);
        }
        throw new RuleFileException(source, line, 0, path, "expected a map, a list, a string, a number or a boolean");
    }

    /**
     * Every name and string of a rule file may end up in a store key, and YAML and JSON escapes can spell an
     * unpaired surrogate ({@code "\\ud800"}), which no store could keep apart from {@code "?"}: refused here,
     * where the error can still name the line.
     */
    private static String wellFormed(String text, String source, int line, int column, String path)
            throws RuleFileException {
        String problem = io.sluice.Text.problem(text);
        if (problem != null) {
            throw new RuleFileException(source, Math.max(line, 0), Math.max(column, 0), path, problem);
        }
        return text;
    }

    Kind kind() {
        return kind;
    }

    String path() {
        return path;
    }

    /** The last segment of the path: the member's key. */
    String name() {
        return path.substring(path.lastIndexOf('.') + 1);
    }

    /** An error located at this value. */
    RuleFileException error(String problem) {
        return new RuleFileException(source, line, column, path, problem);
    }

    /** The members of an object, in file order. */
    Map<String, Node> members(String expected) throws RuleFileException {
        return cast(Kind.OBJECT, expected);
    }

    /** The items of a list. */
    List<Node> items(String expected) throws RuleFileException {
        return cast(Kind.ARRAY, expected);
    }

    String string(String expected) throws RuleFileException {
        return cast(Kind.STRING, expected);
    }

    boolean bool(String expected) throws RuleFileException {
        return this.<Boolean>cast(Kind.BOOLEAN, expected);
    }

    BigInteger integer(String expected) throws RuleFileException {
        return cast(Kind.INTEGER, expected);
    }

    /** An integer or a decimal, as a decimal. */
    BigDecimal number(String expected) throws RuleFileException {
        if (kind == Kind.INTEGER) {
            return new BigDecimal((BigInteger) value);
        }
        return cast(Kind.DECIMAL, expected);
    }

    @SuppressWarnings("unchecked")
    private <T> T cast(Kind wanted, String expected) throws RuleFileException {
        if (kind != wanted) {
            throw error("expected " + expected + "; was " + describe());
        }
        return (T) value;
    }

    /** What this value is, for "expected ...; was ..." messages. */
    String describe() {
        switch (kind) {
            case OBJECT:
                return "a map";
            case ARRAY:
                return "a list";
            case STRING:
                return "the string \"" + value + "\"";
            case NULL:
                return "empty (null)";
            case BOOLEAN:
                return "the boolean " + value;
            case INTEGER:
                return "the integer " + value;
            default:
                return "the number " + ((BigDecimal) value).toPlainString();
        }
    }
}
