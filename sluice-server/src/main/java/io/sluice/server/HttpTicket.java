package io.sluice.server;

import com.fasterxml.jackson.databind.JsonNode;
import io.sluice.Limit;
import io.sluice.Ticket;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Iterator;
import java.util.Set;

/**
 * The ticket of {@code POST /v1/charge} as it travels: an opaque string the client keeps and sends back to
 * {@code POST /v1/settle}. It holds what a {@link Ticket} holds (id, key, estimate) and what the server needs to
 * find the limiter again: the rule or limit the charge addressed, and its domain. The text is base64url without
 * padding (safe in JSON, a header or a URL) of a small JSON object,
 * <code>{"rule" or "limit": name, "domain": d (when given), "key": k, "estimate": n, "id": id}</code>, so a
 * key holding any character comes back exactly.
 *
 * <p>It is neither a secret nor signed, and needs neither: the store keeps what the settlement applies (the
 * estimate charged and where each limit's charge went) under the ticket's id, 128 random bits the server drew.
 * A ticket edited to name another key or estimate finds no open ticket of that id and settles nothing.
 *
 * @param byLimit  whether the charge addressed one limit ({@code "limit"}) rather than a rule
 * @param name     the rule's or the limit's name
 * @param domain   the charge's domain, or null
 * @param key      the key as the client sent it (without the domain)
 * @param estimate the permits charged
 * @param id       the ticket id in the store
 */
record HttpTicket(boolean byLimit, String name, String domain, String key, long estimate, String id) {

    private static final Set<String> FIELDS = Set.of("rule", "limit", "domain", "key", "estimate", "id");

    /** The key the store counts: the key in its domain, as {@code /v1/check} joins them. */
    String scopedKey() {
        return domain == null ? key : domain + CheckRequest.DOMAIN_SEPARATOR + key;
    }

    /** The opaque text a client sends back. */
    String encode() {
        StringBuilder s = new StringBuilder(96 + name.length() + key.length());
        Json.string(s.append(byLimit ? "{\"limit\":" : "{\"rule\":"), name);
        if (domain != null) {
            Json.string(s.append(",\"domain\":"), domain);
        }
        Json.string(s.append(",\"key\":"), key);
        s.append(",\"estimate\":").append(estimate);
        Json.string(s.append(",\"id\":"), id).append('}');
        return Base64.getUrlEncoder().withoutPadding().encodeToString(s.toString().getBytes(StandardCharsets.UTF_8));
    }

    /**
     * Reads a ticket a client sent back, checking every part as the charge checked it.
     *
     * @throws InvalidRequestException naming {@code at} when the text is not a ticket this API wrote
     */
    static HttpTicket decode(String text, String at, CheckRequest parser) throws InvalidRequestException {
        JsonNode root;
        try {
            byte[] json = Base64.getUrlDecoder().decode(text);
            CheckRequest.requireText(json);
            root = CheckRequest.MAPPER.readTree(json);
        } catch (IllegalArgumentException | IOException | InvalidRequestException e) {
            throw notATicket(at);
        }
        if (root == null || !root.isObject()) {
            throw notATicket(at);
        }
        for (Iterator<String> names = root.fieldNames(); names.hasNext(); ) {
            if (!FIELDS.contains(names.next())) {
                throw notATicket(at);
            }
        }
        boolean byLimit = root.has("limit");
        JsonNode name = root.get(byLimit ? "limit" : "rule");
        JsonNode key = root.get("key");
        JsonNode estimate = root.get("estimate");
        JsonNode id = root.get("id");
        if (byLimit == root.has("rule") || name == null || !name.isTextual() || key == null || !key.isTextual()
                || estimate == null || !estimate.canConvertToLong() || !estimate.isIntegralNumber() || id == null
                || !id.isTextual()) {
            throw notATicket(at);
        }
        String domain = root.has("domain") ? CheckRequest.domain(root.get("domain"), at + " domain") : null;
        String checkedKey = parser.key(CheckRequest.string(key, at + " key"), at + " key");
        long permits = CheckRequest.integer(estimate, at + " estimate", 1, Limit.MAX_COUNT);
        try {
            Ticket.checkId(id.textValue());
        } catch (IllegalArgumentException e) {
            throw InvalidRequestException.at(at, e.getMessage());
        }
        return new HttpTicket(byLimit, CheckRequest.string(name, at), domain, checkedKey, permits, id.textValue());
    }

    private static InvalidRequestException notATicket(String at) {
        return InvalidRequestException.at(at, "not a ticket of POST /v1/charge; send back the \"ticket\" of its "
                + "answer unchanged");
    }
}
