package io.sluice.cli;

import picocli.CommandLine.Option;

/**
 * {@code -h, --help} of every command (a picocli mixin): prints the command's usage and exits 0, whatever else
 * the command line holds, so asking for help never starts, installs or measures anything.
 */
final class HelpOption {

    @Option(names = {"-h", "--help"}, usageHelp = true, description = "print this text and exit")
    boolean help;
}
