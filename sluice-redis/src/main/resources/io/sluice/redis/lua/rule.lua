-- rule.lua: the dispatcher, the last part of the script. It decides requests under every limit of one or
-- more (rule, key) targets, each all or nothing, with the order of operations of io.sluice.internal.RuleEvaluator
-- (and io.sluice.internal.memory.MemoryStore for loading, migrating and committing states).
--
-- Two forms (docs/redis-script-protocol.md). The single form decides ONE request (exact mode):
--
-- KEYS[1..n]   the state key of each limit, in rule order (targets concatenated)
-- KEYS[n + 1]  the call's dedup key, present when ARGV[5] is not empty
-- ARGV[1]      op: "try" | "at_most" | "reserve" | "peek" | "release" | "charge" | "settle"
-- ARGV[2]      permits (for "release": the lease; "charge": the estimate; "settle": the actual cost)
-- ARGV[3]      max wait in microseconds (Long.MAX_VALUE: unbounded); "0" unless op is "reserve"; for "charge"
--              the ticket's lifetime in microseconds
-- ARGV[4]      "now,slack": now in microseconds from the client's clock and the TTL slack in ms, or "" to
--              read the server's TIME
-- ARGV[5]      request id, or "" (peeks): a replayed call with the same id gets the stored reply
-- ARGV[6]      how long the dedup key lives, in milliseconds
-- ARGV[7]      n, the number of limits; "n:MASK" when some are shadow limits, MASK being n characters, "1" for a
--              shadow limit and "0" for an enforced one (io.sluice.internal.ShadowEvaluator)
--              Either followed by "|after within for" when the rule has a lockout (lockout.lua; single form
--              only), its state key then last in KEYS; or by "|drop" for a while after the client saw the
--              rule's lockout removed: the lockout's key, last in KEYS, is deleted (single form only)
-- KEYS[n + 1 or n + 2] for "charge" and "settle": the ticket's key, right after the dedup key (settle.lua)
-- ARGV[5 + 3i] algorithm of limit i, e.g. "fixed_window"
-- ARGV[6 + 3i] fingerprint of limit i's version: 6 characters, e.g. "sCp3P_"
-- ARGV[7 + 3i] parameters of limit i: the words of its limit record, e.g. "3 1000000 epoch 0"
-- ARGV[8 + 3n ...] previous versions the client knows (none in the common case), three arguments each:
--              limit index i, fingerprint, parameter words (of limit i's algorithm)
--
-- Reply: allowed (1/0), granted, remaining, retryAfterMicros, resetAfterMicros, waitMicros, decider (1-based
-- index of the limit that decided, 0 for "release" and for a lockout's rejection), lease (-1: none), shadow decider (1-based index of the
-- shadow limit that would have rejected, 0: none), its retryAfterMicros (0: none), replayed (1 when the reply
-- is the stored one of an earlier call with the same request id); integers of magnitude below 10^14 as integer replies, the
-- others (Long.MAX_VALUE for "never") as strings. A replayed call gets the stored reply as strings.
--
-- The batch form decides m requests of one target, one after another in the given order, at one now
-- (coalesced mode): as if each had been a single-form call of its own, consecutively, at that instant.
--
-- ARGV[1]      "batch"
-- ARGV[2]      m, the number of requests (at least 1)
-- ARGV[3]      "0"
-- ARGV[4..]    as in the single form: now, ONE request id for the whole call ("" when every request is a
--              peek), dedup TTL, n, the limits, their previous versions
-- ARGV[#ARGV - 3m + 1 ...] the m requests, three arguments each: op, permits (the lease for "release"), max wait
--
-- Reply: the ten fields above for each request, in order, then replayed. A replayed batch call gets the
-- stored reply of the whole call, as strings.
--
-- Each limit's state is loaded once, stepped through the requests, and written once at the end when some
-- request would have written it.

local op = ARGV[1]
-- The common shape, one enforced limit without lockout or previous versions deciding one "try" or "reserve", or a
-- batch of "try", "reserve" and "at_most" requests, takes rule_one.lua's fast paths, which decide exactly as the
-- rest of this file would (FastPathIT).
if ARGV[7] == "1" then
  if (op == "try" or op == "reserve") and #ARGV == 10 then
    return sluice_decide_one(KEYS, ARGV)
  end
  -- Its batch form too (coalesced mode), when every request is a "try", "reserve" or "at_most".
  if op == "batch" and #ARGV == 10 + 3 * tonumber(ARGV[2]) then
    local fast = true
    for j = 11, #ARGV, 3 do
      local o = ARGV[j]
      if o ~= "try" and o ~= "reserve" and o ~= "at_most" then
        fast = false
        break
      end
    end
    if fast then
      return sluice_decide_batch_one(KEYS, ARGV)
    end
  end
end
local n = ARGV[7] == "1" and 1 or tonumber(ARGV[7])   -- one limit: no call into C
-- shadow[i] is true for a shadow limit; nil when the rule has none (the common case).
local shadow = nil
local enforced = n
-- The lockout's parameters (lockout.lua), or nil (the common case).
local lockout_words = nil
local count_arg = ARGV[7]
if n == nil then
  local bar = string.find(count_arg, "|", 1, true)
  if bar then
    lockout_words = string.sub(count_arg, bar + 1)
    count_arg = string.sub(count_arg, 1, bar - 1)
  end
  n = tonumber(count_arg)
  enforced = n
end
if n == nil then
  local count, mask = string.match(count_arg, "^(%d+):([01]+)$")
  n = tonumber(count)
  enforced = n
  shadow = {}
  for i = 1, n do
    shadow[i] = string.sub(mask, i, i) == "1"
    if shadow[i] then
      enforced = enforced - 1
    end
  end
end
local batch = op == "batch"
local m = 1
local last_version_arg = #ARGV
if batch then
  m = tonumber(ARGV[2])
  last_version_arg = #ARGV - 3 * m
end
local dedup_key = nil
if ARGV[5] ~= "" then
  dedup_key = KEYS[n + 1]
end
-- "charge" and "settle" (docs/reference/settle.md): the ticket's key follows the dedup key.
local ticket_key, tickets = nil, nil
if op == "charge" or op == "settle" then
  ticket_key = KEYS[n + (dedup_key and 2 or 1)]
  tickets = sluice_tickets()
end

-- A replayed call (Lettuce re-sends in-flight commands after a reconnect) answers as the first one did,
-- charging nothing.
if dedup_key then
  local stored = redis.call("GET", dedup_key)
  if stored then
    local reply = sluice.words(stored)
    reply[#reply + 1] = "1"
    return reply
  end
end

-- Read after the replay check, which answers without it.
local now, client_time, client_slack_ms = sluice.call_time(ARGV[4])

-- Refused before anything is charged; the store turns this reply (DecisionCall.TICKET_OPEN) into the
-- IllegalArgumentException the in-memory store throws.
if op == "charge" and tickets.open(ticket_key, now) then
  return redis.error_reply("sluice: ticket id already open for this key; a ticket id must be unique while its"
    .. " ticket lives")
end

-- The previous versions of each limit that the client sent: known[i][fingerprint] = parameter words.
local known = nil
if last_version_arg >= 8 + 3 * n then
  known = {}
  for j = 8 + 3 * n, last_version_arg - 2, 3 do
    local i = tonumber(ARGV[j])
    if known[i] == nil then
      known[i] = {}
    end
    known[i][ARGV[j + 1]] = ARGV[j + 2]
  end
end

-- Each limit with its state at now (sluice.settle: migrated, dropped or expired as its version says). "dirty"
-- marks a migrated or dropped state, which is written back even when the request changes nothing; "write"
-- marks a limit some request wrote (to store at the end), "written" one the previous request of a batch wrote.
-- (A loop, not a function: a function statement allocates a closure on every call.)
local limits = {}
for i = 1, n do
  local name = ARGV[5 + 3 * i]
  local alg = sluice.algorithm(name)
  if alg == nil then
    error("sluice: algorithm " .. tostring(name) .. " has no Redis script")
  end
  local fingerprint = ARGV[6 + 3 * i]
  local limit = { key = KEYS[i], alg = alg, p = sluice.params(alg, ARGV[7 + 3 * i]), fingerprint = fingerprint,
                  state = nil, dirty = false, write = false, written = false }
  local state, stored, exists
  if alg.load then
    state, stored, exists = alg.load(limit.key, limit.p, fingerprint)
  else
    state, stored, exists = sluice.load_value(limit.key, alg.fields)
  end
  limit.state, limit.dirty = sluice.settle(alg, limit.p, fingerprint, state, stored, exists,
    known ~= nil and known[i] or nil, now)
  limits[i] = limit
end

-- The lockout (lockout.lua), read after the limits; single form only (the client sends none in a batch). A
-- settlement never touches it: a refund does not undo the rejections it counted.
local lock = nil
-- "|drop": the rule had a lockout and has none now. A key decided without it forgets the lockout's state, as the
-- memory store drops its slot when it moves the key to the new rule version (LockoutEvaluator): on every call
-- but a release, which moves the key only when it released something.
local drop_lockout = lockout_words == "drop"
if drop_lockout then
  lockout_words = nil
  if op ~= "release" then
    redis.call("DEL", KEYS[#KEYS])
  end
end
if lockout_words and op ~= "settle" then
  if batch then
    error("sluice: a lockout is decided in the single form only")
  end
  lock = sluice_lockout(KEYS[#KEYS], lockout_words, now)
end

-- A request writes a limit's next state. It is written at the end of the call; the next request of a batch
-- decides on it as a call of its own would after loading it back (see the batch loop): stored under the current
-- fingerprint, so no longer dirty. expires: the state's expiry when its step gave it (lib/verdict.lua), else nil;
-- "write" holds it (else true), so that the limit's table keeps 8 fields: a ninth doubles its hash part, which
-- cost more than the expiry saves on a rule of three gcra limits (callgrind).
local function commit(limit, state, expires)
  limit.state = state
  limit.dirty = false
  limit.write = expires or true
  limit.written = true
end


local wrote = false

-- One request at now against the limits' current states: the ten reply fields, as numbers.
local function decide(op, amount, max_wait_arg)
  if op == "release" then
    local lease = sluice.arg_int(amount)
    local released = false
    local next_states = {}
    for i = 1, n do
      local limit = limits[i]
      next_states[i] = limit.state
      if limit.alg.release then
        local r = limit.alg.release(limit.state, now, lease, limit.p)
        released = released or r.released
        next_states[i] = r.state
      end
    end
    if not released then
      return 0, 0, 0, 0, 0, 0, 0, -1, 0, 0
    end
    if drop_lockout then
      redis.call("DEL", KEYS[#KEYS])
    end
    for i = 1, n do
      local limit = limits[i]
      if next_states[i] ~= limit.state or limit.dirty then
        commit(limit, next_states[i])
        wrote = true
      end
    end
    return 1, 0, 0, 0, 0, 0, 0, -1, 0, 0
  end

  if op == "settle" then
    local settled, estimate, actual, changed = tickets.settle(ticket_key, limits, now, amount, commit)
    wrote = wrote or settled
    return settled and 1 or 0, estimate, actual, 0, 0, 0, 0, -1, 0, 0
  end

  local permits = sluice.arg_int(amount)
  local max_wait = 0
  if op == "reserve" then
    max_wait = sluice.arg_int(max_wait_arg)
  end
  if op == "at_most" then
    -- With shadow limits the client has capped permits at the rule's maxPermits (ShadowEvaluator.atMost).
    local grantable = permits
    for i = 1, n do
      if grantable > 0 and not (shadow and shadow[i]) then
        local limit = limits[i]
        grantable = math.min(grantable, limit.alg.grantable(limit.state, now, grantable, limit.p))
      end
    end
    -- Nothing grantable: step one permit so the rejection carries a meaningful retry-after.
    permits = math.max(grantable, 1)
  end

  local steps = {}
  -- expiries[i]: the admitted state's expiry, when limit i's step gave it (lib/verdict.lua); nil for none.
  local expiries = nil
  local allowed = true
  local shadow_allowed, shadow_decider = true, 0
  for i = 1, n do
    local limit = limits[i]
    local expires_at
    steps[i], expires_at = limit.alg.step(limit.state, now, permits, max_wait, limit.p)
    if expires_at ~= nil then
      if expiries == nil then
        expiries = {}
      end
      expiries[i] = expires_at
    end
    if not (shadow and shadow[i]) then
      allowed = allowed and steps[i].allowed
    elseif not steps[i].allowed then
      shadow_allowed = false
      if shadow_decider == 0 or steps[i].retryAfterMicros > steps[shadow_decider].retryAfterMicros then
        shadow_decider = i
      end
    end
  end
  local shadow_retry = 0
  if shadow_decider > 0 then
    shadow_retry = steps[shadow_decider].retryAfterMicros
  end
  -- Whether limit i's steps count in the decision: the enforced ones, or every one when all are shadow limits
  -- (written out in the two loops below, not as a function: a closure per call).

  for i = 1, n do
    local limit = limits[i]
    if op == "peek" then
      -- A peek charges nothing, but keeps a migration (as the in-memory store does).
      if limit.dirty then
        commit(limit, limit.state)
      end
    else
      local next_state, expires
      local charged = allowed
      if shadow and shadow[i] then
        charged = allowed and shadow_allowed
      end
      if charged then
        next_state = steps[i].admitted
        if expiries ~= nil then
          expires = expiries[i]
        end
      else
        next_state = steps[i].rejected
      end
      if next_state ~= limit.state or limit.dirty then
        commit(limit, next_state, expires)
        wrote = true
      end
    end
  end

  if allowed and enforced == 0 then
    -- Shadow limits only: admitted, no wait, no retry-after, no lease (ShadowEvaluator.shadowsOnly).
    local tightest, reset = 1, 0
    for i = 1, n do
      local s = steps[i]
      if s.remaining < steps[tightest].remaining then
        tightest = i
      end
      if s.resetAfterMicros > reset then
        reset = s.resetAfterMicros
      end
    end
    local granted = permits
    if op == "peek" then
      granted = 0
    end
    return 1, granted, steps[tightest].remaining, 0, reset, 0, tightest, -1, shadow_decider, shadow_retry
  end
  if allowed then
    local tightest, wait, reset, lease = 0, 0, 0, -1
    for i = 1, n do
      local s = steps[i]
      if not (shadow and shadow[i]) or enforced == 0 then
        if tightest == 0 or s.remaining < steps[tightest].remaining then
          tightest = i
        end
        if s.waitMicros > wait then
          wait = s.waitMicros
        end
        if s.resetAfterMicros > reset then
          reset = s.resetAfterMicros
        end
        if s.lease >= 0 then
          lease = s.lease
        end
      end
    end
    local granted = permits
    if op == "peek" then
      granted = 0
      lease = -1
    end
    return 1, granted, steps[tightest].remaining, 0, reset, wait, tightest, lease, shadow_decider, shadow_retry
  end
  local decider, remaining, reset = 0, math.huge, 0
  for i = 1, n do
    local s = steps[i]
    if not (shadow and shadow[i]) or enforced == 0 then
      if s.remaining < remaining then
        remaining = s.remaining
      end
      if s.resetAfterMicros > reset then
        reset = s.resetAfterMicros
      end
      if not s.allowed and (decider == 0 or s.retryAfterMicros > steps[decider].retryAfterMicros) then
        decider = i
      end
    end
  end
  return 0, 0, remaining, steps[decider].retryAfterMicros, reset, 0, decider, -1, shadow_decider, shadow_retry
end

-- Integers below 10^14 go back as integer replies (exact, and no string to build: string.format costs about
-- 2,000 instructions); table.concat writes them exactly too (%.14g) when the reply is stored. Larger ones
-- (Long.MAX_VALUE for "never") as strings.
local function value(x)
  if x < 1e14 and x > -1e14 and x % 1 == 0 then
    return x
  end
  return sluice.fmt_int(x)
end

local reply
if batch then
  reply = {}
  local k = 0
  for j = #ARGV - 3 * m + 1, #ARGV, 3 do
    -- A state the previous request wrote that is expired at now was deleted (store does), so it is no state.
    for i = 1, n do
      local limit = limits[i]
      if limit.written then
        limit.written = false
        if limit.state ~= nil and now >= limit.alg.expiresAt(limit.state, limit.p) then
          limit.state = nil
        end
      end
    end
    local a, g, r, ra, rs, w, d, l, sd, sr = decide(ARGV[j], ARGV[j + 1], ARGV[j + 2])
    reply[k + 1], reply[k + 2], reply[k + 3], reply[k + 4] = a, value(g), value(r), value(ra)
    reply[k + 5], reply[k + 6], reply[k + 7], reply[k + 8] = value(rs), value(w), d, value(l)
    reply[k + 9], reply[k + 10] = sd, value(sr)
    k = k + 10
  end
else
  local a, g, r, ra, rs, w, d, l, sd, sr
  local locked = 0
  if lock and op ~= "release" then
    locked = lock.blocked_for()
  end
  if locked > 0 then
    -- Locked out: the limits are not asked. A migration is kept, as a peek keeps it.
    for i = 1, n do
      if limits[i].dirty then
        commit(limits[i], limits[i].state)
      end
    end
    a, g, r, ra, rs, w, d, l, sd, sr = 0, 0, 0, locked, locked, 0, 0, -1, 0, 0
  else
    a, g, r, ra, rs, w, d, l, sd, sr = decide(op, ARGV[2], ARGV[3])
    if op == "charge" and a == 1 then
      tickets.write(ticket_key, limits, now, ARGV[2], ARGV[3], client_time, client_slack_ms)
    end
    if lock and a == 0 and op ~= "peek" and op ~= "release" then
      locked = lock.rejected()
      wrote = true
      if locked > 0 then
        a, g, r, ra, rs, w, d, l, sd, sr = 0, 0, 0, locked, locked, 0, 0, -1, 0, 0
      end
    end
  end
  if wrote and dedup_key then
    -- Stored below as text: strings, which table.concat copies, where a number would be printed with %.14g.
    local fmt = sluice.fmt_int
    reply = { fmt(a), fmt(g), fmt(r), fmt(ra), fmt(rs), fmt(w), fmt(d), fmt(l), fmt(sd), fmt(sr), 0 }
  else
    reply = { a, value(g), value(r), value(ra), value(rs), value(w), d, value(l), sd, value(sr), 0 }
  end
end

for i = 1, n do
  local limit = limits[i]
  local write = limit.write
  if write then
    -- store_state, not store_limit: one Lua call less per limit written.
    sluice.store_state(limit.key, limit.alg, limit.p, limit.fingerprint, limit.state, now, client_time,
      client_slack_ms, write ~= true and write or nil)
  end
end

if lock then
  lock.store(client_time, client_slack_ms)
end

-- Only a call that wrote needs protecting from a replay: replaying one that changed nothing decides afresh,
-- which charges at most once.
-- The single form's reply was built with its eleventh field, replayed (0), so that it never grows (a rehash); the
-- stored text leaves it out.
if wrote and dedup_key then
  local text
  if batch then
    text = sluice_batch_text(reply, #reply)
  else
    text = table.concat(reply, " ", 1, 10)
  end
  redis.call("SET", dedup_key, text, "PX", ARGV[6])
end
if batch then
  reply[#reply + 1] = 0
end
return reply
