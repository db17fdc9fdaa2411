package io.sluice.rules;

/**
 * A rule file (or a limit change) that cannot be used, with where and why: the file, the line and column,
 * the field as a dotted path (e.g. {@code limits.per_min.window}) and what was expected instead.
 *
 * <p>The message reads {@code FILE:LINE:COLUMN: FIELD: PROBLEM}, the form editors and terminals turn into a
 * link; the column is left out when unknown (0).
 */
public final class RuleFileException extends Exception {

    private static final long serialVersionUID = 1L;

    private final String source;
    private final int line;
    private final int column;
    private final String field;
    private final String problem;

    /**
     * @param source  the file name as the user gave it, or another name for the text (e.g. a trace file)
     * @param line    1-based line, or 0 when unknown
     * @param column  1-based column, or 0 when unknown
     * @param field   the dotted path of the field at fault; empty for the document as a whole
     * @param problem what was expected, and what was found
     */
    public RuleFileException(String source, int line, int column, String field, String problem) {
        super(format(source, line, column, field, problem));
        this.source = source;
        this.line = line;
        this.column = column;
        this.field = field;
        this.problem = problem;
    }

    private static String format(String source, int line, int column, String field, String problem) {
        StringBuilder s = new StringBuilder(source);
        if (line > 0) {
            s.append(':').append(line);
            if (column > 0) {
                s.append(':').append(column);
            }
        }
        s.append(": ");
        if (!field.isEmpty()) {
            s.append(field).append(": ");
        }
        return s.append(problem).toString();
    }

    /** The file (or text) name the error is in. */
    public String source() {
        return source;
    }

    /** The 1-based line, 0 when unknown. */
    public int line() {
        return line;
    }

    /** The 1-based column, 0 when unknown. */
    public int column() {
        return column;
    }

    /** The dotted path of the field at fault, e.g. {@code limits.per_min.window}; empty for the whole document. */
    public String field() {
        return field;
    }

    /** What was expected and what was found, without the location. */
    public String problem() {
        return problem;
    }
}
