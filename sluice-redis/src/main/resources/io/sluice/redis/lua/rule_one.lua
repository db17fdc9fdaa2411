-- rule_one.lua: the fast path of rule.lua for the common shape of an exact decision: ONE enforced limit, no
-- lockout, no previous versions, op "try" or "reserve", the single form (rule.lua's first lines choose it, from
-- ARGV[7] == "1", the op and #ARGV == 10; the arguments and the reply are rule.lua's).
--
-- Lua only (speed). It decides exactly as rule.lua's general way (which ports io.sluice.internal.RuleEvaluator)
-- does for that shape: the same reads, the same step, the same reply fields, the same writes in the same order.
-- What it leaves out is what only the other shapes need: the tables of limits and steps, the closures the
-- general way builds on every call (commit, decide, value), the loops over limits, the shadow, lockout and ticket
-- checks. It is a top-level local of the script, so the functions library builds it once per server, not once
-- per call. FastPathIT runs the same seeded calls through this path and through the general one (forced by
-- writing the limit count as the mask "1:0": the same rule, one enforced limit) and compares every reply field,
-- every stored value and every expiry.

-- Integers below 10^14 as integer replies, others (Long.MAX_VALUE for "never") as strings: rule.lua's value().
local function reply_value(x)
  if x < 1e14 and x > -1e14 and x % 1 == 0 then
    return x
  end
  return sluice.fmt_int(x)
end

local function sluice_decide_one(KEYS, ARGV)
  local S = sluice
  local dedup_key = nil
  if ARGV[5] ~= "" then
    dedup_key = KEYS[2]
    -- A replayed call answers as the first one did (rule.lua: "Replays").
    local stored = redis.call("GET", dedup_key)
    if stored then
      local reply = S.words(stored)
      reply[#reply + 1] = "1"
      return reply
    end
  end
  local now, client_time, slack_ms = S.call_time(ARGV[4])

  local name = ARGV[8]
  local alg = S.algorithm(name)
  if alg == nil then
    error("sluice: algorithm " .. tostring(name) .. " has no Redis script")
  end
  local key, fingerprint = KEYS[1], ARGV[9]
  local p = S.params(alg, ARGV[10])
  local state, stored, exists
  if alg.load then
    state, stored, exists = alg.load(key, p, fingerprint)
  else
    state, stored, exists = S.load_value(key, alg.fields)
  end
  local dirty
  state, dirty = S.settle(alg, p, fingerprint, state, stored, exists, nil, now)

  local permits = S.arg_int(ARGV[2])
  local max_wait = 0
  if ARGV[1] == "reserve" then
    max_wait = S.arg_int(ARGV[3])
  end
  local step, admitted_expires = alg.step(state, now, permits, max_wait, p)

  -- rule.lua's decide() for one enforced limit: it decides (decider 1), no shadow decider; reset and wait are
  -- the step's when positive (the general way's maxima start at 0).
  local a, g, r, ra, rs, w, l
  local next_state, expires
  rs = 0
  if step.resetAfterMicros > 0 then
    rs = step.resetAfterMicros
  end
  if step.allowed then
    next_state, expires = step.admitted, admitted_expires
    a, g, r, ra, w, l = 1, permits, step.remaining, 0, 0, -1
    if step.waitMicros > 0 then
      w = step.waitMicros
    end
    if step.lease >= 0 then
      l = step.lease
    end
  else
    next_state = step.rejected
    a, g, r, ra, w, l = 0, 0, math.huge, step.retryAfterMicros, 0, -1
    if step.remaining < r then
      r = step.remaining
    end
  end
  local wrote = next_state ~= state or dirty

  -- Built with its eleventh field, replayed (0), so the table never grows (appending it is a rehash), and with
  -- the fields that are constants for the verdict written as such (a call to reply_value less each).
  local reply
  if wrote and dedup_key then
    -- Stored below as text (rule.lua), without the eleventh field.
    local fmt = S.fmt_int
    reply = { fmt(a), fmt(g), fmt(r), fmt(ra), fmt(rs), fmt(w), "1", fmt(l), "0", "0", 0 }
  elseif a == 1 then
    reply = { 1, reply_value(g), reply_value(r), 0, reply_value(rs), reply_value(w), 1, reply_value(l), 0, 0, 0 }
  else
    reply = { 0, 0, reply_value(r), reply_value(ra), reply_value(rs), 0, 1, -1, 0, 0, 0 }
  end
  if wrote then
    S.store_state(key, alg, p, fingerprint, next_state, now, client_time, slack_ms, expires)
    if dedup_key then
      redis.call("SET", dedup_key, table.concat(reply, " ", 1, 10), "PX", ARGV[6])
    end
  end
  return reply
end
