package io.sluice.cli;

import io.sluice.server.ServeCommand;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.ServiceLoader;
import java.util.concurrent.Callable;
import java.util.function.Supplier;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.IVersionProvider;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;

/**
 * The {@code sluice} command: {@code sluice [demo]} runs the bundled demo on the in-memory store;
 * {@code sluice replay} replays a trace against rule files; {@code sluice bench} runs the benchmarks (from the
 * sluice-bench jar); {@code sluice serve} runs the rate-limit service (module sluice-server).
 *
 * <p>Every command is a picocli {@code @Command} class ({@link DemoCommand}, {@link ReplayCommand},
 * {@link BenchCommand}, {@link HelpCommand}, {@link CompletionCommand}) under this one, except {@code serve},
 * which parses its own arguments ({@link ServeCommand}): it is dispatched before picocli parses anything, and
 * stands in the tree only for the command list, {@code help serve} and the completion script, with the options
 * its {@code --help} text lists ({@link UsageOptions}). Usage errors are worded by {@link UsageErrors}; exit
 * statuses are {@link ExitStatus}.
 */
@Command(name = "sluice", versionProvider = Main.VersionText.class,
        description = {"Sluice's command line: a rate limiter for the JVM, its simulator and its service.",
                "Without a command: the demo."},
        commandListHeading = "%nCommands:%n",
        exitCodeListHeading = "%nExit status (every command):%n",
        exitCodeList = {"0:done", "1:bad input: a rules file, trace, config file or setting is invalid",
                "2:usage: the command line cannot be used", "3:the store is unavailable"})
public final class Main implements Callable<Integer> {

    /** A command that parses its own arguments: its name, one line for the command list, and how to run it. */
    record OwnParser(String name, String summary, Runner runner) {}

    @FunctionalInterface
    interface Runner {
        int run(String[] args, PrintStream out, PrintStream err);
    }

    /** The commands that are not picocli commands (yet): {@code serve}. */
    static final List<OwnParser> OWN_PARSERS = List.of(new OwnParser("serve",
            "the rate-limit service: HTTP/JSON checks and Envoy's gRPC rate-limit protocol", ServeCommand::run));

    @Mixin
    HelpOption help;

    @Option(names = {"-V", "--version"}, versionHelp = true, description = "print the version and exit")
    boolean version;

    private final PrintStream out;

    private Main(PrintStream out) {
        this.out = out;
    }

    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    /** Runs a command; returns the process exit code. */
    static int run(String[] args, PrintStream out, PrintStream err) {
        return run(args, out, err, Main::benchRunner);
    }

    /** Runs a command, {@code bench} with the runner {@code bench} finds; returns the process exit code. */
    static int run(String[] args, PrintStream out, PrintStream err, Supplier<Optional<BenchRunner>> bench) {
        if (args.length > 0) {
            Optional<OwnParser> own = ownParser(args[0]);
            if (own.isPresent()) {
                return own.get().runner().run(Arrays.copyOfRange(args, 1, args.length), out, err);
            }
        }
        int code = commandLine(out, err, bench).execute(args);
        out.flush();
        err.flush();
        return code;
    }

    /** Without a command: the demo. */
    @Override
    public Integer call() {
        return Demo.run(out);
    }

    /** The whole command line: every command, printing to {@code out} and {@code err}. */
    static CommandLine commandLine(PrintStream out, PrintStream err, Supplier<Optional<BenchRunner>> bench) {
        CommandLine cli = new CommandLine(new Main(out));
        cli.addSubcommand(new DemoCommand(out));
        cli.addSubcommand(new ReplayCommand(out, err));
        for (OwnParser own : OWN_PARSERS) {
            CommandSpec spec = CommandSpec.create().name(own.name());
            spec.usageMessage().description(own.summary());
            UsageOptions.of(helpText(own)).forEach(spec::addOption);
            cli.addSubcommand(own.name(), spec);
        }
        cli.addSubcommand(new BenchCommand(out, err, bench));
        cli.addSubcommand(new HelpCommand(out, err));
        cli.addSubcommand(new CompletionCommand(out));
        // Settings that apply to every command, so set once the tree is complete.
        cli.setOut(writer(out));
        cli.setErr(writer(err));
        // Plain text whatever the terminal: `help X` and `X --help` print the same bytes, and logs get no escapes.
        cli.setColorScheme(CommandLine.Help.defaultColorScheme(CommandLine.Help.Ansi.OFF));
        // An argument starting with @ is a value (a key, a file name), never a file of more arguments.
        cli.setExpandAtFiles(false);
        cli.setParameterExceptionHandler(new UsageErrors(err));
        return cli;
    }

    static Optional<OwnParser> ownParser(String name) {
        return OWN_PARSERS.stream().filter(c -> c.name().equals(name)).findFirst();
    }

    /** What {@code sluice COMMAND --help} prints for a command with its own parser. */
    static String helpText(OwnParser command) {
        ByteArrayOutputStream text = new ByteArrayOutputStream();
        PrintStream sink = new PrintStream(text, true, StandardCharsets.UTF_8);
        command.runner().run(new String[] {"--help"}, sink, sink);
        return text.toString(StandardCharsets.UTF_8);
    }

    /** The benchmarks' runner when its jar is on the class path (sluice-bench.jar), else none. */
    static Optional<BenchRunner> benchRunner() {
        return ServiceLoader.load(BenchRunner.class).findFirst();
    }

    /** A writer onto a print stream, in the stream's own encoding (a PrintWriter on it would use the platform's). */
    private static PrintWriter writer(PrintStream stream) {
        return new PrintWriter(new Writer() {
            @Override
            public void write(char[] chars, int offset, int length) {
                stream.print(new String(chars, offset, length));
            }

            @Override
            public void flush() {
                stream.flush();
            }

            @Override
            public void close() {
                stream.flush();
            }
        }, true);
    }

    /** {@code sluice --version}. */
    static final class VersionText implements IVersionProvider {
        @Override
        public String[] getVersion() {
            return new String[] {"sluice " + Version.current()};
        }
    }
}
