package io.sluice.cli;

import java.io.PrintStream;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** {@code sluice demo}: takes no arguments; what it shows is {@link Demo}. */
@Command(name = "demo",
        description = {"every algorithm decides the same burst of requests on the in-memory store (the default"
                + " command)",
                "",
                "Every algorithm, configured for about ten requests a second, decides the same burst of requests"
                        + " for one key on the in-memory store, on a virtual clock: " + (Demo.BURST + Demo.TRICKLE)
                        + " requests, " + Demo.BURST + " at once and then one every 100 ms. No Redis, no network;"
                        + " the output is the same on every run. `sluice` without a command runs it.", ""},
        exitCodeListHeading = "%nExit status:%n",
        exitCodeList = {"0:done", "2:usage (it takes no arguments)"})
final class DemoCommand implements Callable<Integer> {

    @Mixin
    HelpOption help;

    private final PrintStream out;

    DemoCommand(PrintStream out) {
        this.out = out;
    }

    @Override
    public Integer call() {
        return Demo.run(out);
    }
}
