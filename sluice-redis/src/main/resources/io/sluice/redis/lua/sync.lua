-- sync.lua: the dispatcher of synced mode (io.sluice.Mode#synced), the last part of the SECOND script, which is
-- lib/*.lua + algorithms/*.lua + sync.lua (rule.lua ends the first one). Each node decides in process; once per
-- sync interval it sends, per (rule, key) target, one call of this script that absorbs what the node admitted and
-- answers with the shared states, which the node decides against until the next sync. docs/redis-script-protocol.md,
-- "Synced mode", and docs/synced-mode.md say why it is built this way.
--
-- KEYS[1..n]   the state key of each limit, in rule order (the keys rule.lua uses)
-- KEYS[n + 1]  this node's sync marker for the target: a hash whose field "<admittedAt in base 36> <limit>"
--              holds the total this node has pushed for the bucket of permits it began admitting at admittedAt
--              under that limit (the last segment of the limit's state key)
-- ARGV[1]      "now,slack": now in microseconds from the client's clock and the TTL slack in ms, or "" to read
--              the server's TIME (as rule.lua's ARGV[4])
-- ARGV[2]      n, the number of limits
-- ARGV[4i - 1] algorithm of limit i (i = 1..n), e.g. "fixed_window"
-- ARGV[4i]     fingerprint of limit i's version, e.g. "sCp3P_"
-- ARGV[4i + 1] parameters of limit i: the words of its limit record
-- ARGV[4i + 2] the node's buckets for limit i: "admittedAt:total" words, e.g. "1767225600000000:12
--              1767225601000000:3" (none: ""). total is everything the node has admitted in that bucket so far,
--              pushed before or not: it only grows.
-- ARGV[4n + 3 ...] previous versions the client knows, three arguments each (as rule.lua): limit index i,
--              fingerprint, parameter words
--
-- Reply (strings only): now, then per limit the state after absorbing, its fields (the module's M.fields, in
-- order) as decimal integers joined by ",", or "" for no state.
--
-- Why totals and not increments: a bucket's total only grows, and the marker remembers the largest total
-- absorbed from this node, so the script absorbs exactly total - remembered. A call that runs twice (Lettuce
-- re-sends after a reconnect), a retry after a timeout that had in fact run, or an older call overtaken by a
-- newer one absorbs nothing the second time, and a later call carries every permit an earlier failed call
-- did not deliver. The marker lives until every bucket it remembers is over (absorbableUntil): a bucket pushed
-- again after that is over too, and absorb drops it, so a forgotten total can never be absorbed twice.

local n = tonumber(ARGV[2])
local marker_key = KEYS[n + 1]
local now, client_time, client_slack_ms = sluice.call_time(ARGV[1])

-- The previous versions of each limit that the client sent: known[i][fingerprint] = parameter words.
local known = {}
for j = 3 + 4 * n, #ARGV - 2, 3 do
  local i = tonumber(ARGV[j])
  if known[i] == nil then
    known[i] = {}
  end
  known[i][ARGV[j + 1]] = ARGV[j + 2]
end

-- One limit with its state at now, as rule.lua opens it (sluice.settle); "dirty" marks a migrated or dropped
-- state, which is written back even when nothing is absorbed.
local function open(i)
  local name = ARGV[4 * i - 1]
  local alg = sluice.algorithm(name)
  if alg == nil or alg.absorb == nil then
    error("sluice: algorithm " .. tostring(name) .. " cannot be synced")
  end
  local fingerprint = ARGV[4 * i]
  local limit = { key = KEYS[i], alg = alg, p = sluice.params(alg, ARGV[4 * i + 1]), fingerprint = fingerprint }
  local state, stored, exists = sluice.load_value(limit.key, alg.fields)
  limit.state, limit.dirty = sluice.settle(alg, limit.p, fingerprint, state, stored, exists, known[i], now)
  -- The limit's name as its state key ends: escaped, so it holds no ':' (KeyLayout).
  limit.segment = string.match(limit.key, "[^:]*$")
  return limit
end

local function store(limit, state)
  sluice.store_limit(limit, state, now, client_time, client_slack_ms)
end

-- The totals already absorbed from this node, by marker field.
local absorbed = {}
local flat = redis.call("HGETALL", marker_key)
for j = 1, #flat, 2 do
  absorbed[flat[j]] = sluice.arg_int(flat[j + 1])
end
local marker_changed = false

local reply = { sluice.fmt_int(now) }
local by_segment = {}
for i = 1, n do
  local limit = open(i)
  by_segment[limit.segment] = limit
  local state = limit.state
  for _, word in ipairs(sluice.words(ARGV[4 * i + 2])) do
    local colon = string.find(word, ":", 1, true)
    local admittedAt = sluice.arg_int(string.sub(word, 1, colon - 1))
    local total = sluice.arg_int(string.sub(word, colon + 1))
    local field = sluice.fmt_b36(admittedAt) .. " " .. limit.segment
    local before = absorbed[field] or 0
    if total > before then
      state = limit.alg.absorb(state, now, total - before, admittedAt, limit.p)
      absorbed[field] = total
      marker_changed = true
    end
  end
  if state ~= limit.state or limit.dirty then
    store(limit, state)
  end
  if state == nil or now >= limit.alg.expiresAt(state, limit.p) then
    reply[#reply + 1] = ""
  else
    local out = {}
    for f, field in ipairs(limit.alg.fields) do
      if field[2] == "num" then
        out[f] = sluice.fmt_num(state[field[1]])
      else
        out[f] = sluice.fmt_int(state[field[1]])
      end
    end
    reply[#reply + 1] = table.concat(out, ",")
  end
end

-- The marker keeps the buckets whose permits absorb could still count, and lives until the last of them is
-- over; a bucket of a limit no longer in the rule is forgotten.
local kept = {}
local last_until = nil
for field, total in pairs(absorbed) do
  local space = string.find(field, " ", 1, true)
  local limit = nil
  if space then
    limit = by_segment[string.sub(field, space + 1)]
  end
  local keep = false
  if limit ~= nil then
    local until_at = limit.alg.absorbableUntil(sluice.arg_b36(string.sub(field, 1, space - 1)), limit.p)
    if now < until_at then
      keep = true
      if last_until == nil or until_at > last_until then
        last_until = until_at
      end
    end
  end
  if keep then
    kept[#kept + 1] = field
    kept[#kept + 1] = sluice.fmt_int(total)
  else
    marker_changed = true
  end
end
if marker_changed then
  redis.call("DEL", marker_key)
  if #kept > 0 then
    redis.call("HSET", marker_key, unpack(kept))
    sluice.expire(marker_key, last_until, now, client_time, client_slack_ms)
  end
end

return reply
