package io.sluice.cli;

import java.io.PrintStream;
import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.MissingParameterException;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.OverwrittenOptionException;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.TypeConversionException;
import picocli.CommandLine.UnmatchedArgumentException;

/**
 * A command line that cannot be used, in one line that names the command and the option, then where the
 * options are listed; exit status {@link ExitStatus#USAGE}. picocli's own messages ("Missing required option:
 * '--rules=FILE'") are reworded in the style of every other Sluice error: {@code sluice replay: --rules is
 * required}, {@code sluice replay: --slice: expected at least 1ms; was "100us"}.
 */
final class UsageErrors implements CommandLine.IParameterExceptionHandler {

    private final PrintStream err;

    UsageErrors(PrintStream err) {
        this.err = err;
    }

    @Override
    public int handleParseException(ParameterException e, String[] args) {
        CommandLine command = e.getCommandLine();
        String name = command.getCommandSpec().qualifiedName();
        err.println(name + ": " + message(e, args));
        boolean top = command.getCommandSpec().parent() == null;
        err.println(top ? "(sluice --help lists the commands)" : "(" + name + " --help shows the options)");
        err.flush();
        return ExitStatus.USAGE;
    }

    static String message(ParameterException e, String[] args) {
        if (e instanceof UnmatchedArgumentException u) {
            List<String> unmatched = u.getUnmatched();
            String first = unmatched.isEmpty() ? "" : unmatched.get(0);
            if (first.startsWith("-")) {
                return "unknown option '" + first + "'";
            }
            boolean top = e.getCommandLine().getCommandSpec().parent() == null;
            return (top ? "unknown command '" : "unexpected argument '") + first + "'";
        }
        // picocli checks required options before unknown ones; an unknown option explains a missing one better.
        List<String> unmatched = e.getCommandLine().getUnmatchedArguments();
        if (e instanceof MissingParameterException && !unmatched.isEmpty() && unmatched.get(0).startsWith("-")) {
            return "unknown option '" + unmatched.get(0) + "'";
        }
        if (e instanceof MissingParameterException m && !m.getMissing().isEmpty()) {
            ArgSpec missing = m.getMissing().get(0);
            if (missing instanceof OptionSpec option) {
                // Named on the command line but without its value, or not given at all.
                return option.longestName() + (given(option, args) ? " needs a value" : " is required");
            }
            return missing.paramLabel() + " is required";
        }
        if (e instanceof OverwrittenOptionException o && o.getOverwritten() instanceof OptionSpec option) {
            return option.longestName() + " given twice";
        }
        if (e.getArgSpec() != null && e.getValue() != null) {
            String what = e.getArgSpec() instanceof OptionSpec option ? option.longestName()
                    : e.getArgSpec().paramLabel();
            if (e.getCause() instanceof TypeConversionException c) {
                return what + ": " + c.getMessage();
            }
            return what + ": cannot use \"" + e.getValue() + "\": " + e.getMessage();
        }
        return e.getMessage();
    }

    /** Whether {@code option} appears on the command line, alone or as {@code --name=value}. */
    private static boolean given(OptionSpec option, String[] args) {
        for (String arg : args) {
            for (String name : option.names()) {
                if (arg.equals(name) || arg.startsWith(name + "=")) {
                    return true;
                }
            }
        }
        return false;
    }
}
