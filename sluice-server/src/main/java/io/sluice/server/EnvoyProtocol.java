package io.sluice.server;

import com.google.protobuf.UInt64Value;
import io.envoyproxy.envoy.config.core.v3.HeaderValue;
import io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.sluice.http.RateLimitFields;
import io.sluice.rules.EnvoyConfig;
import java.util.ArrayList;
import java.util.List;

/**
 * Envoy's rate-limit protocol messages ({@code envoy.service.ratelimit.v3}) to and from {@link EnvoyDecider}'s
 * terms, shared by the gRPC service and the {@code /json} endpoint so both answer alike.
 *
 * <p>Responses follow envoyproxy/ratelimit: per descriptor a code, the {@code current_limit} that applied,
 * {@code limit_remaining} and {@code duration_until_reset} (whole seconds to the end of the window); an
 * unlimited descriptor reports {@code limit_remaining} 2^32 − 1 and no limit; an unmatched one only OK. The
 * response headers describe the headline descriptor (the one over the limit, else the one with the fewest
 * remaining) as envoyproxy/ratelimit's {@code X-RateLimit-Limit}, {@code X-RateLimit-Remaining} and
 * {@code X-RateLimit-Reset}, plus the IETF {@code RateLimit-Policy} (every limit that applied) and
 * {@code RateLimit} fields.
 */
final class EnvoyProtocol {

    private static final long MAX_UINT32 = 0xFFFF_FFFFL;

    private EnvoyProtocol() {}

    /** The descriptors of a request, with hits resolved (a descriptor's own {@code hits_addend} first). */
    static List<EnvoyDecider.Descriptor> descriptors(RateLimitRequest request) throws InvalidRequestException {
        long requestHits = request.getHitsAddend() == 0 ? 1 : Integer.toUnsignedLong(request.getHitsAddend());
        List<EnvoyDecider.Descriptor> out = new ArrayList<>(request.getDescriptorsCount());
        for (int i = 0; i < request.getDescriptorsCount(); i++) {
            RateLimitDescriptor d = request.getDescriptors(i);
            List<EnvoyConfig.Entry> entries = new ArrayList<>(d.getEntriesCount());
            for (RateLimitDescriptor.Entry e : d.getEntriesList()) {
                entries.add(new EnvoyConfig.Entry(e.getKey(), e.getValue()));
            }
            EnvoyDecider.Override override = null;
            if (d.hasLimit()) {
                override = new EnvoyDecider.Override(Integer.toUnsignedLong(d.getLimit().getRequestsPerUnit()),
                        unit(d.getLimit().getUnitValue(), "descriptors[" + i + "].limit.unit"));
            }
            long hits = requestHits;
            if (d.hasHitsAddend()) {
                UInt64Value own = d.getHitsAddend();
                if (own.getValue() < 0 || own.getValue() > EnvoyDecider.MAX_HITS) {
                    throw InvalidRequestException.at("descriptors[" + i + "].hits_addend", "must be at most "
                            + EnvoyDecider.MAX_HITS + ", was " + Long.toUnsignedString(own.getValue()));
                }
                // Set, it is the descriptor's own, 0 included: envoy then checks without counting.
                hits = own.getValue();
            }
            out.add(new EnvoyDecider.Descriptor(entries, override, hits));
        }
        return out;
    }

    private static EnvoyConfig.Unit unit(int value, String path) throws InvalidRequestException {
        io.envoyproxy.envoy.type.v3.RateLimitUnit unit = io.envoyproxy.envoy.type.v3.RateLimitUnit.forNumber(value);
        if (unit != null) {
            for (EnvoyConfig.Unit u : EnvoyConfig.Unit.values()) {
                if (u.name().equals(unit.name())) {
                    return u;
                }
            }
        }
        throw InvalidRequestException.at(path, "expected SECOND, MINUTE, HOUR, DAY, MONTH or YEAR, was "
                + (unit == null ? String.valueOf(value) : unit.name()));
    }

    /** The response to a request whose descriptors got {@code statuses}. */
    static RateLimitResponse response(List<EnvoyDecider.Status> statuses, boolean headers) {
        RateLimitResponse.Builder response = RateLimitResponse.newBuilder();
        for (EnvoyDecider.Status s : statuses) {
            RateLimitResponse.DescriptorStatus.Builder status = RateLimitResponse.DescriptorStatus.newBuilder()
                    .setCode(s.over() ? RateLimitResponse.Code.OVER_LIMIT : RateLimitResponse.Code.OK);
            if (s.unlimited()) {
                status.setLimitRemaining((int) MAX_UINT32);
            } else if (s.limited()) {
                RateLimitResponse.RateLimit.Builder limit = RateLimitResponse.RateLimit.newBuilder()
                        .setRequestsPerUnit((int) s.requestsPerUnit())
                        .setUnit(RateLimitResponse.RateLimit.Unit.valueOf(s.unit().name()));
                if (!s.configName().isEmpty()) {
                    limit.setName(s.configName());
                }
                status.setCurrentLimit(limit)
                        .setLimitRemaining((int) Math.min(MAX_UINT32, s.remaining()))
                        .setDurationUntilReset(com.google.protobuf.Duration.newBuilder().setSeconds(s.resetSeconds()));
            }
            response.addStatuses(status);
        }
        response.setOverallCode(overall(statuses) ? RateLimitResponse.Code.OVER_LIMIT : RateLimitResponse.Code.OK);
        EnvoyDecider.Status headline = EnvoyDecider.headline(statuses);
        if (headers && headline != null) {
            response.addResponseHeadersToAdd(header("X-RateLimit-Limit", String.valueOf(headline.requestsPerUnit())));
            response.addResponseHeadersToAdd(header("X-RateLimit-Remaining", String.valueOf(headline.remaining())));
            response.addResponseHeadersToAdd(header("X-RateLimit-Reset", String.valueOf(headline.resetSeconds())));
            response.addResponseHeadersToAdd(header("RateLimit-Policy", EnvoyDecider.policyField(statuses)));
            response.addResponseHeadersToAdd(header("RateLimit", RateLimitFields.rateLimitItem(headline.limitName(),
                    headline.remaining(), headline.resetSeconds())));
        }
        return response.build();
    }

    /**
     * Whether the request as a whole is over the limit, as envoy decides it: any descriptor over a limit
     * without {@code quota_mode}, or every {@code quota_mode} descriptor over its limit (when it has some).
     */
    static boolean overall(List<EnvoyDecider.Status> statuses) {
        int quota = 0;
        int quotaOver = 0;
        for (EnvoyDecider.Status s : statuses) {
            if (s.quotaMode()) {
                quota++;
                if (s.over()) {
                    quotaOver++;
                }
            } else if (s.over()) {
                return true;
            }
        }
        return quota > 0 && quota == quotaOver;
    }

    private static HeaderValue header(String key, String value) {
        return HeaderValue.newBuilder().setKey(key).setValue(value).build();
    }
}
