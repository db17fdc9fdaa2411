package io.sluice.cli;

import io.sluice.server.ServeCommand;
import java.io.PrintStream;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.ServiceLoader;

/**
 * The {@code sluice} command: {@code sluice [demo]} runs the bundled demo on the in-memory store;
 * {@code sluice replay} replays a trace against rule files; {@code sluice serve} runs the rate-limit service
 * (module sluice-server). Subcommands from modules the launcher does not depend on ({@code bench}) are
 * {@link Subcommand}s found on the class path.
 */
public final class Main {

    private Main() {}

    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    /** Runs a subcommand; returns the process exit code. */
    static int run(String[] args, PrintStream out, PrintStream err) {
        String command = args.length == 0 ? "demo" : args[0];
        String[] rest = args.length == 0 ? args : Arrays.copyOfRange(args, 1, args.length);
        switch (command) {
            case "demo":
                return Demo.run(rest, out, err);
            case "replay":
                return Replay.run(rest, out, err);
            case "serve":
                return ServeCommand.run(rest, out, err);
            case "help":
            case "-h":
            case "--help":
                usage(out);
                return 0;
            default:
                Optional<Subcommand> plugged = pluggedIn().stream()
                        .filter(s -> s.name().equals(command)).findFirst();
                if (plugged.isPresent()) {
                    return plugged.get().run(List.of(rest), out, err);
                }
                err.println("sluice: unknown command '" + command + "'");
                usage(err);
                return 2;
        }
    }

    private static void usage(PrintStream out) {
        out.println("usage: sluice [command]");
        out.println();
        out.println("commands:");
        out.println("  demo    every algorithm decides the same burst of requests on the in-memory store (default)");
        out.println("  replay  replays a trace of requests against rule files: decisions, summary, chart");
        out.println("  serve   the rate-limit service: HTTP/JSON checks and Envoy's gRPC rate-limit protocol");
        for (Subcommand s : pluggedIn()) {
            out.printf("  %-7s %s%n", s.name(), s.summary());
        }
        out.println("  help    this text");
    }

    /** The {@link Subcommand}s on the class path, by name. */
    static List<Subcommand> pluggedIn() {
        return ServiceLoader.load(Subcommand.class).stream().map(ServiceLoader.Provider::get)
                .sorted(Comparator.comparing(Subcommand::name)).toList();
    }
}
