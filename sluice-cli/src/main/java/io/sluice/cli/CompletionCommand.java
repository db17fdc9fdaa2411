package io.sluice.cli;

import java.io.PrintStream;
import java.util.concurrent.Callable;
import picocli.AutoComplete;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * {@code sluice completion}: picocli's bash completion script for the whole command tree (every command, its
 * options, and file names after options that take a file); zsh reads it after {@code bashcompinit}.
 */
@Command(name = "completion",
        description = {"prints a bash (and zsh) completion script: source <(sluice completion)", "",
                "It completes the commands, each command's options, and file names after options that take a"
                        + " file. For zsh, first: autoload -U bashcompinit && bashcompinit"})
final class CompletionCommand implements Callable<Integer> {

    @Mixin
    HelpOption help;

    @Spec
    CommandSpec spec;

    private final PrintStream out;

    CompletionCommand(PrintStream out) {
        this.out = out;
    }

    @Override
    public Integer call() {
        out.print(AutoComplete.bash("sluice", spec.parent().commandLine()));
        out.flush();
        return ExitStatus.OK;
    }
}
