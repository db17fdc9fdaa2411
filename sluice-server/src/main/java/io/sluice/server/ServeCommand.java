package io.sluice.server;

import io.sluice.rules.RuleFileException;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.NoSuchFileException;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * {@code sluice serve}: runs {@link SluiceServer} until the process is told to stop (SIGINT, SIGTERM), then
 * stops gracefully. Settings ({@link ServeOptions}) come from, in order of precedence, the command line (parsed
 * by picocli, which also writes the help), the environment (each option {@code --x-y} as {@code SLUICE_X_Y}), a
 * {@code --config} file, and the defaults: the bundled example rules on the in-memory store, on 127.0.0.1 ports
 * 8080 (HTTP) and 8081 (gRPC).
 *
 * <p>Exit statuses: 0 stopped on request, 1 invalid rules, config file or setting, or a port that cannot be
 * bound, 2 a command line that cannot be used, 3 the store is unavailable. An expected failure is one line
 * (one JSON object with {@code --log-format json}), never a stack trace.
 */
public final class ServeCommand {

    private static final Logger LOG = LoggerFactory.getLogger(ServeCommand.class);

    /** The exit status for a store that cannot be reached; the same number as sluice-cli's ExitStatus. */
    static final int STORE_UNAVAILABLE = 3;

    private ServeCommand() {}

    /** {@code sluice serve} as a program of its own (how tests start server processes). */
    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    /** Runs the command; returns when the server has stopped (or could not start) with the exit code. */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        Configured configured;
        try {
            configured = configure(args, System.getenv()::get);
            if (configured == null) {
                out.println(usage());
                return 0;
            }
        } catch (UsageException e) {
            err.println("sluice serve: " + e.getMessage());
            err.println("(sluice serve --help shows the options)");
            return 2;
        } catch (ConfigException e) {
            err.println("sluice serve: " + e.getMessage());
            return 1;
        }
        try {
            ServerLogging.apply(configured.logFormat(), configured.logLevel());
        } catch (ConfigException e) {
            err.println("sluice serve: " + e.getMessage());
            return 1;
        }
        Failure failure = new Failure(err, "json".equals(configured.logFormat()));
        SluiceServer server;
        try {
            server = configured.builder().build();
        } catch (IllegalArgumentException e) {
            return failure.report(2, e.getMessage());
        } catch (RuleFileException e) {
            return failure.report(1, e.getMessage());
        } catch (NoSuchFileException e) {
            return failure.report(2, "cannot read " + e.getFile() + ": no such file");
        } catch (IOException e) {
            return failure.report(1, String.valueOf(e));
        } catch (io.sluice.redis.RedisStoreException e) {
            // Expected when Redis is down or the address is wrong: the message says which, no stack trace.
            return failure.report(STORE_UNAVAILABLE, "the store is unavailable: " + e.getMessage());
        }
        try {
            server.start();
        } catch (IllegalStateException e) {
            server.close();
            return failure.report(1, e.getMessage());
        }
        CountDownLatch stopped = new CountDownLatch(1);
        // SIGTERM and Ctrl-C run the hooks: stop gracefully there (requests in flight finish), then report.
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                server.close();
            } catch (RuntimeException e) {
                err.println("sluice serve: stopping failed: " + e);
            }
            out.println("sluice serve: stopped");
            out.flush();
            stopped.countDown();
        }, "sluice-serve-shutdown"));
        banner(server, out);
        try {
            stopped.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return 0;
    }

    /**
     * Says why the server could not start, in one line: plain text on standard error, or with
     * {@code --log-format json} one JSON log event ({@code "event": "start_failed"}), so that a log pipeline
     * reading JSON sees it too.
     */
    private record Failure(PrintStream err, boolean json) {
        int report(int status, String message) {
            if (json) {
                LOG.atError().setMessage(message).addKeyValue("event", "start_failed")
                        .addKeyValue("exit_status", status).log();
            } else {
                err.println("sluice serve: " + message);
            }
            return status;
        }
    }

    /** What the command line asked for: a server to build, and how to log. */
    record Configured(SluiceServer.Builder builder, String logFormat, String logLevel) {}

    /** The picocli model of the command line: one option per setting, and {@code --help}. */
    public static CommandSpec commandSpec() {
        CommandSpec spec = CommandSpec.create().name("sluice serve");
        spec.usageMessage()
                .synopsisHeading("")
                .sortOptions(false)
                .customSynopsis("usage: sluice serve [--rules FILE|DIR]... [--store SPEC] [--bind ADDRESS]"
                        + " [--http-port PORT] [OPTION]...")
                .description("", "Serves rate-limit checks over HTTP/JSON (POST /v1/check, /v1/check/batch), Envoy's"
                        + " gRPC rate-limit service and envoyproxy/ratelimit's POST /json, with /health, /ready and"
                        + " Prometheus /metrics. Without options: the bundled example rules, in memory, on"
                        + " 127.0.0.1:8080 (HTTP) and :8081 (gRPC).", "")
                .width(110)
                .footer("", "Every option can also be set by an environment variable, SLUICE_ and its name:"
                        + " SLUICE_STORE, SLUICE_HTTP_PORT, SLUICE_LOG_FORMAT ... (SLUICE_RULES: comma-separated),"
                        + " and in the --config file by its key (http_port ...). The command line wins over the"
                        + " environment, which wins over the --config file.",
                        "",
                        "Exit status: 0 stopped, 1 invalid rules, config or setting, or a port that cannot be"
                        + " bound, 2 usage, 3 the store is unavailable (Redis cannot be reached).");
        spec.addOption(OptionSpec.builder("-h", "--help").usageHelp(true).description("this text").build());
        for (ServeOptions.Setting s : ServeOptions.ALL) {
            OptionSpec.Builder option = OptionSpec.builder(s.option()).paramLabel(s.label()).arity("1")
                    .description(s.help().replace("%", "%%")
                            + (s.defaultText().startsWith("none") ? "" : " (default " + s.defaultText() + ")"));
            if (s.kind() == ServeOptions.Kind.FILES) {
                option.type(List.class).auxiliaryTypes(String.class);
            } else {
                option.type(String.class);
            }
            spec.addOption(option.build());
        }
        return spec;
    }

    /** What {@code sluice serve --help} prints. */
    static String usage() {
        return new CommandLine(commandSpec()).getUsageMessage(CommandLine.Help.Ansi.OFF).stripTrailing();
    }

    private static void banner(SluiceServer server, PrintStream out) {
        String host = server.bindAddress().contains(":") ? "[" + server.bindAddress() + "]" : server.bindAddress();
        String scheme = server.tls() ? "https" : "http";
        out.println("sluice serve: store " + server.storeDescription());
        out.println("sluice serve: rules " + String.join(", ", server.ruleSources()) + ": " + server.rulesSummary());
        if (server.defaultMode().kind() != io.sluice.Mode.Kind.EXACT) {
            List<String> exact = server.rulesNotInDefaultMode();
            out.println("sluice serve: default mode " + server.defaultMode() + " for rules without their own"
                    + (exact.isEmpty() ? "" : "; enforced exactly, as it cannot run them: " + String.join(", ", exact)));
        }
        out.println("sluice serve: HTTP on " + scheme + "://" + host + ":" + server.httpPort()
                + " (POST /v1/check, /v1/check/batch, /json; GET /health, /ready, /metrics, /v1/rules)");
        out.println("sluice serve: gRPC on " + host + ":" + server.grpcPort()
                + (server.grpcOnHttpPort() ? " (the HTTP port)" : "")
                + (server.tls() ? " with TLS" : " (plain text)") + " (envoy.service.ratelimit.v3.RateLimitService)");
        if (!loopback(server.bindAddress()) && !tokenConfigured(server)) {
            out.println("sluice serve: warning: listening beyond this machine without --token: anyone who reaches"
                    + " the port can spend and inspect limits");
        }
        out.println("sluice serve: ready; Ctrl-C stops");
        out.flush();
    }

    private static boolean tokenConfigured(SluiceServer server) {
        return server.tokenRequired();
    }

    private static boolean loopback(String address) {
        try {
            return InetAddress.getByName(address).isLoopbackAddress();
        } catch (UnknownHostException e) {
            return false;
        }
    }

    /**
     * The server the arguments, environment and config file describe, and how to log; null when only help was
     * asked for ({@link ServeConfiguration}).
     */
    static Configured configure(String[] args, Function<String, String> env) throws UsageException, ConfigException {
        return ServeConfiguration.configure(args, env);
    }

    /** The environment variable that stands for an option: {@code --http-port} is {@code SLUICE_HTTP_PORT}. */
    static String envName(String option) {
        return ServeOptions.byOption(option).env();
    }

    /** A setting whose value cannot work (a token nobody could send); exit status 1. */
    static final class ConfigException extends Exception {
        private static final long serialVersionUID = 1L;

        ConfigException(String message) {
            super(message);
        }
    }

    /** A command line (or config file) that cannot be used; exit status 2. */
    static final class UsageException extends Exception {
        private static final long serialVersionUID = 1L;

        UsageException(String message) {
            super(message);
        }
    }
}
