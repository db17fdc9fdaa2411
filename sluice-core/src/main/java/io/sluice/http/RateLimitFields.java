package io.sluice.http;

import io.sluice.Concurrency;
import io.sluice.Decision;
import io.sluice.FixedWindow;
import io.sluice.Gcra;
import io.sluice.LeakyBucket;
import io.sluice.Limit;
import io.sluice.RefreshPeriod;
import io.sluice.RollingWindow;
import io.sluice.Rule;
import io.sluice.SlidingLog;
import io.sluice.SlidingWindow;
import io.sluice.SmoothBursty;
import io.sluice.SmoothWarmingUp;
import io.sluice.TokenBucket;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

/**
 * The {@code RateLimit-Policy} and {@code RateLimit} header fields of draft-ietf-httpapi-ratelimit-headers-11,
 * both Structured Field Lists (RFC 9651) of items whose value is an sf-string naming a policy:
 *
 * <pre>
 * RateLimit-Policy: "per_second";q=20;w=2, "per_minute";q=300;w=60
 * RateLimit: "per_second";r=19;t=1
 * </pre>
 *
 * <p>A policy is one limit of the rule, named as the limit is (what {@link Decision#limit()} reports). Its
 * {@code q} is the most permits the limit holds at once (what {@code r} counts down from) and its {@code w}
 * how long the limit takes to give all {@code q} back: the window of the window algorithms, the time to refill
 * an empty bucket for the bucket algorithms. {@code w} is left out when that is not a whole number of seconds
 * (the draft has no sub-second windows) and for {@code concurrency}, whose quota is not spent over time; the
 * latter says {@code qu="concurrent-requests"} instead. Guava's smooth limiters are advertised by their stable
 * rate when it is a whole number per second or one per whole number of seconds, and not advertised otherwise.
 *
 * <p>{@code RateLimit} carries one item: the limit that decided, with {@code r} = the decision's remaining
 * permits and {@code t} = seconds, rounded up, until the request could pass again when it was rejected
 * (which is also the {@code Retry-After}, so Retry-After never points before the end of the effective window,
 * as the draft asks) or, when it was admitted, until the key is back to its full quota. A decision knows that
 * time for the rule as a whole, not per limit, so an admitted request under a rule of several limits has no
 * {@code t} rather than another limit's; neither has a rejection that no amount of waiting would lift.
 *
 * <p>Public API shared by {@code sluice serve}, the Spring Boot filters and applications that write the fields
 * themselves:
 *
 * <pre>{@code
 * response.setHeader("RateLimit-Policy", RateLimitFields.policyField(limiter.rule()));  // may be null
 * response.setHeader("RateLimit", RateLimitFields.rateLimitField(decision, limiter.rule()));
 * if (!decision.allowed()) response.setHeader("Retry-After", Long.toString(decision.retryAfterSeconds()));
 * }</pre>
 *
 * <p>Stateless; thread-safe.
 */
public final class RateLimitFields {

    private RateLimitFields() {}

    /**
     * One policy.
     *
     * @param id            the policy's name (a limit's name)
     * @param quota         {@code q}
     * @param windowSeconds {@code w}, or 0 for none
     * @param concurrent    whether the quota is of requests in flight
     */
    public record Policy(String id, long quota, long windowSeconds, boolean concurrent) {

        /** The policy as one list member: {@code "id";q=..;w=..}. */
        public String item() {
            StringBuilder s = sfString(new StringBuilder(), id).append(";q=").append(quota);
            if (concurrent) {
                s.append(";qu=\"concurrent-requests\"");
            }
            if (windowSeconds > 0) {
                s.append(";w=").append(windowSeconds);
            }
            return s.toString();
        }
    }

    /** The policy of {@code limit}, or null when it has no whole-number quota to advertise. */
    public static Policy policy(Limit limit) {
        String id = limit.name();
        if (limit instanceof FixedWindow f) {
            return windowPolicy(id, f.limit(), micros(f.window()));
        } else if (limit instanceof SlidingLog s) {
            return windowPolicy(id, s.limit(), micros(s.window()));
        } else if (limit instanceof SlidingWindow s) {
            return windowPolicy(id, s.limit(), micros(s.window()));
        } else if (limit instanceof RollingWindow r) {
            return windowPolicy(id, r.limit(), micros(r.window()));
        } else if (limit instanceof TokenBucket t) {
            // Empty to full: capacity tokens at refillTokens per refillPeriod.
            return refillPolicy(id, t.capacity(), micros(t.refillPeriod()), t.refillTokens());
        } else if (limit instanceof Gcra g) {
            return refillPolicy(id, g.burst(), micros(g.period()), g.limit());
        } else if (limit instanceof LeakyBucket b) {
            // A leaky bucket admits one request plus its queue at once.
            return refillPolicy(id, b.burst() + 1, micros(b.period()), b.limit());
        } else if (limit instanceof RefreshPeriod r) {
            return windowPolicy(id, r.limitForPeriod(), micros(r.refreshPeriod()));
        } else if (limit instanceof Concurrency c) {
            return new Policy(id, c.maxConcurrent(), 0, true);
        } else if (limit instanceof SmoothBursty s) {
            return ratePolicy(id, s.permitsPerSecond());
        } else if (limit instanceof SmoothWarmingUp s) {
            return ratePolicy(id, s.permitsPerSecond());
        } else if (limit instanceof io.sluice.CalendarWindow c) {
            // Calendar windows vary in length (23-hour days, 28-day months): the quota, with no fixed w.
            return new Policy(id, c.limit(), 0, false);
        }
        return null;
    }

    /** {@code RateLimit-Policy} for every limit of {@code rule} that has a policy; null when none has. */
    public static String policyField(Rule rule) {
        List<Policy> policies = new java.util.ArrayList<>();
        for (Limit l : rule.limits()) {
            policies.add(policy(l));
        }
        return policyField(policies);
    }

    /** {@code RateLimit} for a decision under {@code rule}. */
    public static String rateLimitField(Decision d, Rule rule) {
        return rateLimitField(d, rule.limits().size());
    }

    /** {@code RateLimit-Policy} for these policies (nulls skipped); null when there are none. */
    public static String policyField(List<Policy> policies) {
        StringBuilder s = new StringBuilder();
        for (Policy p : policies) {
            if (p != null) {
                s.append(s.length() == 0 ? "" : ", ").append(p.item());
            }
        }
        return s.length() == 0 ? null : s.toString();
    }

    /**
     * {@code RateLimit} for a decision under a rule of {@code limits} limits: the deciding limit's remaining
     * permits and effective window.
     */
    public static String rateLimitField(Decision d, int limits) {
        long t;
        if (!d.allowed()) {
            t = d.retryAfterMicros() == Long.MAX_VALUE ? -1 : d.retryAfterSeconds();
        } else {
            t = limits == 1 ? ceilSeconds(d.resetAfterMicros()) : -1;
        }
        return rateLimitItem(d.limit(), d.remaining(), t);
    }

    /** One {@code RateLimit} item; {@code t < 0} leaves the effective window out. */
    public static String rateLimitItem(String id, long remaining, long t) {
        StringBuilder s = sfString(new StringBuilder(), id).append(";r=").append(remaining);
        if (t >= 0) {
            s.append(";t=").append(t);
        }
        return s.toString();
    }

    /** Whole seconds, rounded up. */
    public static long ceilSeconds(long micros) {
        return micros == Long.MAX_VALUE ? Long.MAX_VALUE : (micros + 999_999) / 1_000_000;
    }

    /**
     * An sf-string (RFC 9651 section 3.3.3): printable ASCII, with {@code "} and {@code \} escaped. Characters
     * outside printable ASCII cannot be written in an sf-string; they are percent-encoded as UTF-8 (and so is
     * {@code %} itself, so distinct names stay distinct).
     */
    public static StringBuilder sfString(StringBuilder s, String value) {
        s.append('"');
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c == '"' || c == '\\') {
                s.append('\\').append(c);
            } else if (c >= 0x20 && c < 0x7f && c != '%') {
                s.append(c);
            } else {
                int end = Character.isHighSurrogate(c) && i + 1 < value.length() ? i + 2 : i + 1;
                for (byte b : value.substring(i, end).getBytes(StandardCharsets.UTF_8)) {
                    s.append('%').append(Character.toUpperCase(Character.forDigit((b >> 4) & 0xf, 16)))
                            .append(Character.toUpperCase(Character.forDigit(b & 0xf, 16)));
                }
                i = end - 1;
            }
        }
        return s.append('"');
    }

    private static long micros(Duration d) {
        return d.toNanos() / 1_000;
    }

    /** {@code quota} per window of {@code windowMicros} µs; w only when whole seconds. */
    private static Policy windowPolicy(String id, long quota, long windowMicros) {
        return new Policy(id, quota, wholeSeconds(BigInteger.valueOf(windowMicros), BigInteger.ONE), false);
    }

    /** {@code quota} that refills at {@code perPeriod} per {@code periodMicros}: w = quota × period / perPeriod. */
    private static Policy refillPolicy(String id, long quota, long periodMicros, long perPeriod) {
        BigInteger numerator = BigInteger.valueOf(quota).multiply(BigInteger.valueOf(periodMicros));
        return new Policy(id, quota, wholeSeconds(numerator, BigInteger.valueOf(perPeriod)), false);
    }

    private static final BigInteger MICROS_PER_SECOND = BigInteger.valueOf(1_000_000);

    /** numerator / denominator µs as whole seconds, or 0 when that is not a whole number of seconds (or is 0). */
    private static long wholeSeconds(BigInteger numerator, BigInteger denominator) {
        BigInteger[] qr = numerator.divideAndRemainder(denominator.multiply(MICROS_PER_SECOND));
        return qr[1].signum() == 0 && qr[0].signum() > 0 && qr[0].bitLength() < 63 ? qr[0].longValue() : 0;
    }

    private static Policy ratePolicy(String id, double permitsPerSecond) {
        if (permitsPerSecond >= 1 && permitsPerSecond == Math.rint(permitsPerSecond)) {
            return new Policy(id, (long) permitsPerSecond, 1, false);
        }
        double seconds = 1 / permitsPerSecond;
        if (permitsPerSecond < 1 && seconds == Math.rint(seconds)) {
            return new Policy(id, 1, (long) seconds, false);
        }
        return null;
    }
}
