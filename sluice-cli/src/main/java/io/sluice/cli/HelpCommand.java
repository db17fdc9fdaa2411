package io.sluice.cli;

import java.io.PrintStream;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code sluice help [COMMAND]}: the command list, or COMMAND's help, the very text {@code sluice COMMAND --help}
 * prints (picocli's usage of the command, or for a command with its own parser, what its {@code --help} prints).
 */
@Command(name = "help", description = "the commands, or COMMAND's options: the same as sluice COMMAND --help",
        exitCodeListHeading = "%nExit status:%n", exitCodeList = {"0:done", "2:usage (an unknown COMMAND)"})
final class HelpCommand implements Callable<Integer> {

    @Parameters(paramLabel = "COMMAND", arity = "0..1", completionCandidates = CommandNames.class,
            description = "a command: demo, replay, serve, bench, help or completion")
    String topic;

    @Mixin
    HelpOption help;

    @Spec
    CommandSpec spec;

    private final PrintStream out;
    private final PrintStream err;

    HelpCommand(PrintStream out, PrintStream err) {
        this.out = out;
        this.err = err;
    }

    @Override
    public Integer call() {
        CommandLine sluice = spec.parent().commandLine();
        if (topic == null) {
            sluice.usage(sluice.getOut());
            return ExitStatus.OK;
        }
        Optional<Main.OwnParser> own = Main.ownParser(topic);
        if (own.isPresent()) {
            return own.get().runner().run(new String[] {"--help"}, out, err);
        }
        CommandLine command = sluice.getSubcommands().get(topic);
        if (command == null) {
            err.println("sluice help: unknown command '" + topic + "'");
            err.println("(sluice help lists the commands)");
            return ExitStatus.USAGE;
        }
        command.usage(command.getOut());
        return ExitStatus.OK;
    }

    /** What COMMAND completes to. */
    static final class CommandNames implements Iterable<String> {
        @Override
        public java.util.Iterator<String> iterator() {
            return java.util.List.of("demo", "replay", "serve", "bench", "help", "completion").iterator();
        }
    }
}
