package io.sluice.cli;

import java.io.PrintStream;
import java.util.List;

/** A plugged-in subcommand for {@link SubcommandDispatchTest}, registered in the test resources. */
public final class EchoSubcommand implements Subcommand {

    @Override
    public String name() {
        return "echo-test";
    }

    @Override
    public String summary() {
        return "prints its arguments (test only)";
    }

    @Override
    public int run(List<String> args, PrintStream out, PrintStream err) {
        out.println(String.join(" ", args));
        return args.contains("fail") ? 1 : 0;
    }
}
