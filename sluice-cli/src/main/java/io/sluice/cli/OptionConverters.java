package io.sluice.cli;

import io.sluice.rules.Durations;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * Conversions of option values that picocli does not know. Each failure says what was expected and what was
 * given; {@link UsageErrors} puts the option's name in front of it, e.g.
 * {@code --slice: expected at least 1ms; was "100us"}.
 */
final class OptionConverters {

    private OptionConverters() {}

    /** A regular expression ({@code --key-class}, {@code --filter}). */
    static final class Regex implements ITypeConverter<Pattern> {
        @Override
        public Pattern convert(String value) {
            try {
                return Pattern.compile(value);
            } catch (PatternSyntaxException e) {
                throw new TypeConversionException("expected a regular expression; " + e.getDescription()
                        + " in \"" + value + "\"");
            }
        }
    }

    /** A chart slice width in microseconds: a duration of at least one millisecond ({@code --slice}). */
    static final class SliceMicros implements ITypeConverter<Long> {
        @Override
        public Long convert(String value) {
            long micros;
            try {
                micros = Durations.parse(value).toNanos() / 1_000;
            } catch (IllegalArgumentException e) {
                throw new TypeConversionException(e.getMessage());
            }
            if (micros < 1_000) {
                throw new TypeConversionException("expected at least 1ms; was \"" + value + "\"");
            }
            return micros;
        }
    }

    /** A width and a height in pixels. */
    record Size(int width, int height) {}

    /** A size in pixels, {@code WIDTHxHEIGHT}, each of 2 to 5 digits ({@code --chart-size}). */
    static final class ChartSize implements ITypeConverter<Size> {
        private static final Pattern SIZE = Pattern.compile("([0-9]{2,5})x([0-9]{2,5})");

        @Override
        public Size convert(String value) {
            Matcher m = SIZE.matcher(value);
            if (!m.matches()) {
                throw new TypeConversionException("expected WIDTHxHEIGHT in pixels, e.g. 1200x800; was \"" + value
                        + "\"");
            }
            return new Size(Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2)));
        }
    }
}
