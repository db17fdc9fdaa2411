package io.sluice.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.Function;

/**
 * Whether standard error is a terminal, which decides whether {@code sluice replay} draws its progress bar
 * there. {@link System#console()} cannot say: it needs standard input and output to be terminals too, and the
 * bar is wanted exactly when the decisions go to a file or a pipe. Java has no isatty, so, in order:
 * <ol>
 *   <li>{@code SLUICE_PROGRESS=always} or {@code never}: the user's choice;</li>
 *   <li>{@code SLUICE_STDERR_TTY=1} or {@code 0}: set by the {@code ./sluice} launcher, which asks the shell
 *       ({@code [ -t 2 ]});</li>
 *   <li>on Linux, what {@code /proc/self/fd/2} points to: a terminal device ({@code /dev/pts/N},
 *       {@code /dev/ttyN}) or something else (a file, a pipe, a socket);</li>
 *   <li>otherwise {@link System#console()}, which is right when all three streams are terminals and errs on the
 *       side of no bar.</li>
 * </ol>
 * {@code TERM=dumb} (Emacs shells, some CI logs) means no bar unless {@code SLUICE_PROGRESS=always}.
 */
final class Terminal {

    private Terminal() {}

    /** For this process. */
    static boolean stderrIsTerminal() {
        return stderrIsTerminal(System.getenv()::get, fd2Target(), System.console() != null);
    }

    /**
     * The decision from its inputs.
     *
     * @param env       the environment
     * @param fd2Target where {@code /proc/self/fd/2} points, or null where there is no such file
     * @param console   whether {@link System#console()} is non-null
     * @throws IllegalArgumentException when {@code SLUICE_PROGRESS} is neither {@code always} nor {@code never}
     */
    static boolean stderrIsTerminal(Function<String, String> env, String fd2Target, boolean console) {
        String forced = env.apply("SLUICE_PROGRESS");
        if (forced != null) {
            return switch (forced) {
                case "always" -> true;
                case "never" -> false;
                default -> throw new IllegalArgumentException(
                        "SLUICE_PROGRESS must be always or never, was '" + forced + "'");
            };
        }
        if ("dumb".equals(env.apply("TERM"))) {
            return false;
        }
        String launcher = env.apply("SLUICE_STDERR_TTY");
        if (launcher != null) {
            return launcher.equals("1");
        }
        if (fd2Target != null) {
            return fd2Target.startsWith("/dev/pts/") || fd2Target.startsWith("/dev/tty");
        }
        return console;
    }

    /** Where standard error's descriptor points on Linux; null elsewhere or when it cannot be read. */
    private static String fd2Target() {
        Path fd2 = Path.of("/proc/self/fd/2");
        try {
            return Files.isSymbolicLink(fd2) ? Files.readSymbolicLink(fd2).toString() : null;
        } catch (IOException | UnsupportedOperationException | SecurityException e) {
            return null;
        }
    }

    /** Prints whether standard error is a terminal: lets a test ask a process started on a pseudo-terminal. */
    public static void main(String[] args) {
        System.out.println(stderrIsTerminal());
    }
}
