package io.sluice.cli;

import io.sluice.server.ServeCommand;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.ServiceLoader;
import picocli.AutoComplete;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Model.PositionalParamSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParseResult;

/**
 * The {@code sluice} command: {@code sluice [demo]} runs the bundled demo on the in-memory store;
 * {@code sluice replay} replays a trace against rule files; {@code sluice serve} runs the rate-limit service
 * (module sluice-server). Subcommands from modules the launcher does not depend on ({@code bench}) are
 * {@link Subcommand}s found on the class path.
 *
 * <p>The command line is a picocli model ({@link #model}): the commands, and each command's options as its
 * {@code --help} text lists them ({@link UsageOptions}). picocli parses what comes before a command
 * ({@code --version}, {@code --help}), and the {@code help} and {@code completion} commands; a command's own
 * arguments go to that command, whose parser and messages are its own. Exit statuses: {@link ExitStatus}.
 */
public final class Main {

    private Main() {}

    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    /** Runs a subcommand; returns the process exit code. */
    static int run(String[] args, PrintStream out, PrintStream err) {
        if (args.length == 0) {
            return Demo.run(args, out, err);
        }
        List<Subcommand> commands = commands();
        Optional<Subcommand> command = find(commands, args[0]);
        if (command.isPresent()) {
            return command.get().run(List.of(Arrays.copyOfRange(args, 1, args.length)), out, err);
        }
        if (!args[0].startsWith("-") && !args[0].equals("help") && !args[0].equals("completion")) {
            err.println("sluice: unknown command '" + args[0] + "'");
            err.println(usage(commands));
            return ExitStatus.USAGE;
        }
        ParseResult parsed;
        try {
            parsed = new CommandLine(model(commands, false)).parseArgs(args);
        } catch (ParameterException e) {
            err.println("sluice: " + e.getMessage());
            err.println("(sluice --help lists the commands)");
            return ExitStatus.USAGE;
        }
        if (parsed.isVersionHelpRequested()) {
            out.println("sluice " + Version.current());
            return ExitStatus.OK;
        }
        if (!parsed.hasSubcommand()) {
            out.println(usage(commands));
            return ExitStatus.OK;
        }
        ParseResult sub = parsed.subcommand();
        if (sub.commandSpec().name().equals("completion")) {
            out.print(AutoComplete.bash("sluice", new CommandLine(model(commands, true))));
            out.flush();
            return ExitStatus.OK;
        }
        // help [COMMAND]: the command's own --help, so that both show the same text.
        String topic = sub.matchedPositionalValue(0, null);
        if (topic == null) {
            out.println(usage(commands));
            return ExitStatus.OK;
        }
        Optional<Subcommand> helped = find(commands, topic);
        if (helped.isEmpty()) {
            err.println("sluice help: unknown command '" + topic + "'");
            err.println(usage(commands));
            return ExitStatus.USAGE;
        }
        return helped.get().run(List.of("--help"), out, err);
    }

    /** The built-in commands, then those on the class path. */
    static List<Subcommand> commands() {
        List<Subcommand> all = new ArrayList<>();
        all.add(new Builtin("demo", "every algorithm decides the same burst of requests on the in-memory store"
                + " (default)", Demo::run));
        all.add(new Builtin("replay", "replays a trace of requests against rule files: decisions, summary, chart",
                Replay::run));
        all.add(new Builtin("serve", "the rate-limit service: HTTP/JSON checks and Envoy's gRPC rate-limit protocol",
                ServeCommand::run));
        all.addAll(pluggedIn());
        return all;
    }

    /**
     * The picocli model of the command line. With {@code options}, every command carries the options its
     * {@code --help} lists (to generate the completion script); without, only its name and summary.
     */
    static CommandSpec model(List<Subcommand> commands, boolean options) {
        CommandSpec top = CommandSpec.create().name("sluice").mixinStandardHelpOptions(true)
                .version("sluice " + Version.current());
        top.usageMessage().description("Sluice's command line: a rate limiter for the JVM, its simulator and its"
                + " service.", "Without a command: the demo.");
        for (Subcommand command : commands) {
            CommandSpec spec = CommandSpec.create().name(command.name());
            spec.usageMessage().description(command.summary());
            if (options && command.name().equals("serve")) {
                serveOptions().forEach(spec::addOption);
            } else if (options) {
                UsageOptions.of(helpText(command)).forEach(spec::addOption);
            }
            top.addSubcommand(command.name(), spec);
        }
        CommandSpec help = CommandSpec.create().name("help");
        help.usageMessage().description("the commands, or COMMAND's options: the same as sluice COMMAND --help");
        help.addPositional(PositionalParamSpec.builder().paramLabel("COMMAND").arity("0..1").type(String.class)
                .completionCandidates(commands.stream().map(Subcommand::name).toList()).build());
        top.addSubcommand("help", help);
        CommandSpec completion = CommandSpec.create().name("completion");
        completion.usageMessage().description("prints a bash (and zsh) completion script: source <(sluice completion)");
        top.addSubcommand("completion", completion);
        return top;
    }

    /**
     * {@code sluice serve}'s options from its own picocli model (its help is picocli's, not the two-column text
     * {@link UsageOptions} reads), with file-valued options typed as paths so that they complete as file names.
     */
    private static List<OptionSpec> serveOptions() {
        List<OptionSpec> out = new ArrayList<>();
        for (OptionSpec o : ServeCommand.commandSpec().options()) {
            OptionSpec.Builder b = OptionSpec.builder(o.names()).description(o.description());
            if (o.usageHelp()) {
                b.arity("0").type(boolean.class);
            } else {
                b.paramLabel(o.paramLabel()).arity("1")
                        .type(o.paramLabel().startsWith("FILE") ? Path.class : String.class);
            }
            out.add(b.build());
        }
        return out;
    }

    /** What {@code sluice --help} prints: picocli's usage of the model. */
    static String usage(List<Subcommand> commands) {
        return new CommandLine(model(commands, false)).getUsageMessage(CommandLine.Help.Ansi.OFF).stripTrailing();
    }

    /** What {@code sluice COMMAND --help} prints. */
    static String helpText(Subcommand command) {
        ByteArrayOutputStream text = new ByteArrayOutputStream();
        PrintStream sink = new PrintStream(text, true, StandardCharsets.UTF_8);
        command.run(List.of("--help"), sink, sink);
        return text.toString(StandardCharsets.UTF_8);
    }

    private static Optional<Subcommand> find(List<Subcommand> commands, String name) {
        return commands.stream().filter(c -> c.name().equals(name)).findFirst();
    }

    /** The {@link Subcommand}s on the class path, by name. */
    static List<Subcommand> pluggedIn() {
        return ServiceLoader.load(Subcommand.class).stream().map(ServiceLoader.Provider::get)
                .sorted(Comparator.comparing(Subcommand::name)).toList();
    }

    /** A command of this module (or sluice-server's serve), run with its own parser. */
    private record Builtin(String name, String summary, Runner runner) implements Subcommand {
        @Override
        public int run(List<String> args, PrintStream out, PrintStream err) {
            return runner.run(args.toArray(new String[0]), out, err);
        }
    }

    @FunctionalInterface
    private interface Runner {
        int run(String[] args, PrintStream out, PrintStream err);
    }
}
