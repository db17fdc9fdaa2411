-- rule_one.lua: the fast paths of rule.lua for the common shape of an exact decision: ONE enforced limit, no
-- lockout, no previous versions. sluice_decide_one decides the single form's "try" or "reserve" (rule.lua's first
-- lines choose it, from ARGV[7] == "1", the op and #ARGV == 10); sluice_decide_batch_one decides the batch form
-- (coalesced mode) when every request is a "try", "reserve" or "at_most" (ARGV[7] == "1", #ARGV == 10 + 3m). The
-- arguments and the replies are rule.lua's.
--
-- Lua only (speed). They decide exactly as rule.lua's general way (which ports io.sluice.internal.RuleEvaluator)
-- does for that shape: the same reads, the same step, the same reply fields, the same writes in the same order.
-- What they leave out is what only the other shapes need: the tables of limits and steps, the closures the
-- general way builds on every call (commit, decide, value), the loops over limits, the shadow, lockout and ticket
-- checks. They are top-level locals of the script, so the functions library builds them once per server, not once
-- per call. FastPathIT runs the same seeded calls through these paths and through the general one (forced by
-- writing the limit count as the mask "1:0": the same rule, one enforced limit) and compares every reply field,
-- every stored value and every expiry.

-- Integers below 10^14 as integer replies, others (Long.MAX_VALUE for "never") as strings: rule.lua's value().
local function reply_value(x)
  if x < 1e14 and x > -1e14 and x % 1 == 0 then
    return x
  end
  return sluice.fmt_int(x)
end

-- The limit of a one-limit call and its state at now (rule.lua's loop that opens the limits, for one limit).
local function open_one(key, name, fingerprint, words, now)
  local S = sluice
  local alg = S.algorithm(name)
  if alg == nil then
    error("sluice: algorithm " .. tostring(name) .. " has no Redis script")
  end
  local p = S.params(alg, words)
  local state, stored, exists
  if alg.load then
    state, stored, exists = alg.load(key, p, fingerprint)
  else
    state, stored, exists = S.load_value(key, alg.fields)
  end
  local dirty
  state, dirty = S.settle(alg, p, fingerprint, state, stored, exists, nil, now)
  return alg, p, state, dirty
end

-- The call's request id key (nil when the call has none) and, when that id was seen before, the first call's reply
-- marked as replayed: a replayed call answers as the first one did (rule.lua: "Replays").
local function replay_of(KEYS, ARGV)
  if ARGV[5] == "" then
    return nil, nil
  end
  local dedup_key = KEYS[2]
  local stored = redis.call("GET", dedup_key)
  if stored then
    local reply = sluice.words(stored)
    reply[#reply + 1] = "1"
    return dedup_key, reply
  end
  return dedup_key, nil
end

local function sluice_decide_one(KEYS, ARGV)
  local S = sluice
  local dedup_key, replayed = replay_of(KEYS, ARGV)
  if replayed then
    return replayed
  end
  local now, client_time, slack_ms = S.call_time(ARGV[4])

  local key, fingerprint = KEYS[1], ARGV[9]
  local alg, p, state, dirty = open_one(key, ARGV[8], fingerprint, ARGV[10], now)

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

-- A reply value as stored text: integers with "%d" (the digits %.14g would print below 10^14, and -0 as "0" as
-- fmt_int writes it), with no call into C for the commonest values; a value already a string (reply_value's, 10^14
-- and up) as it is.
local function stored_text(x)
  if x == 0 then
    return "0"
  elseif x == 1 then
    return "1"
  elseif x == -1 then
    return "-1"
  elseif type(x) == "string" then
    return x
  end
  return string.format("%d", x)
end

-- The stored text of a batch call's reply (its k fields, ten per request): the fields joined by spaces, as the
-- single form stores its reply. Each run of equal replies is formatted once (on a hot key most of a batch's replies
-- are the one before them), instead of table.concat printing every number with %.14g (about 2,500 instructions
-- each). Shared by both ways of deciding a batch, so their stored replies are the same text.
local function sluice_batch_text(reply, k)
  local parts, text = {}, nil
  for i = 0, k - 10, 10 do
    if text == nil or reply[i + 1] ~= reply[i - 9] or reply[i + 2] ~= reply[i - 8] or reply[i + 3] ~= reply[i - 7]
        or reply[i + 4] ~= reply[i - 6] or reply[i + 5] ~= reply[i - 5] or reply[i + 6] ~= reply[i - 4]
        or reply[i + 7] ~= reply[i - 3] or reply[i + 8] ~= reply[i - 2] or reply[i + 9] ~= reply[i - 1]
        or reply[i + 10] ~= reply[i] then
      text = stored_text(reply[i + 1]) .. " " .. stored_text(reply[i + 2]) .. " " .. stored_text(reply[i + 3])
        .. " " .. stored_text(reply[i + 4]) .. " " .. stored_text(reply[i + 5]) .. " " .. stored_text(reply[i + 6])
        .. " " .. stored_text(reply[i + 7]) .. " " .. stored_text(reply[i + 8]) .. " " .. stored_text(reply[i + 9])
        .. " " .. stored_text(reply[i + 10])
    end
    parts[i / 10 + 1] = text
  end
  return table.concat(parts, " ")
end

-- The batch form (coalesced mode) of one enforced limit, every request a "try", "reserve" or "at_most": rule.lua's
-- batch loop and decide() for that shape. The state is loaded once, stepped through the requests at one now and
-- written once at the end when some request wrote it.
--
-- Lua only (speed), besides what sluice_decide_one leaves out: a request with the same three arguments as the
-- previous one, which committed nothing, gets the previous request's reply without a step. That is exact, not an
-- estimate: step is a pure function of (state, now, permits, max wait, parameters) and at_most's grantable of
-- (state, now, permits), the state is the very same table (nothing committed) at the same now, so the step would
-- return the same verdict and again commit nothing (the hot key under attack: a batch of rejections, each the one
-- before it).
local function sluice_decide_batch_one(KEYS, ARGV)
  local S = sluice
  local dedup_key, replayed = replay_of(KEYS, ARGV)
  if replayed then
    return replayed
  end
  local now, client_time, slack_ms = S.call_time(ARGV[4])
  local key, fingerprint = KEYS[1], ARGV[9]
  local alg, p, state, dirty = open_one(key, ARGV[8], fingerprint, ARGV[10], now)

  local reply = {}
  local k = 0
  -- write: what rule.lua's limit.write holds (false: nothing to write; the admitted state's expiry from its step;
  -- true: compute it when storing); written: the previous request committed (rule.lua's limit.written).
  local write, written = false, false
  -- The previous request's arguments while it committed nothing (nil after a commit): its reply is the next one's
  -- when they are the same (strings are interned: these are pointer comparisons).
  local same_op, same_amount, same_wait = nil, nil, nil
  for j = 11, #ARGV, 3 do
    local op, amount, wait_arg = ARGV[j], ARGV[j + 1], ARGV[j + 2]
    if op == same_op and amount == same_amount and wait_arg == same_wait then
      reply[k + 1], reply[k + 2], reply[k + 3], reply[k + 4], reply[k + 5] =
        reply[k - 9], reply[k - 8], reply[k - 7], reply[k - 6], reply[k - 5]
      reply[k + 6], reply[k + 7], reply[k + 8], reply[k + 9], reply[k + 10] =
        reply[k - 4], reply[k - 3], reply[k - 2], reply[k - 1], reply[k]
    else
      -- A state the previous request wrote that is expired at now was deleted (store does), so it is no state.
      if written then
        written = false
        if state ~= nil and now >= (write ~= true and write or alg.expiresAt(state, p)) then
          state = nil
        end
      end
      local permits = S.arg_int(amount)
      local max_wait = 0
      if op == "reserve" then
        max_wait = S.arg_int(wait_arg)
      elseif op == "at_most" then
        -- rule.lua: at most what the limit grants now; nothing grantable steps one permit, for the retry-after.
        local grantable = permits
        if grantable > 0 then
          grantable = math.min(grantable, alg.grantable(state, now, grantable, p))
        end
        permits = math.max(grantable, 1)
      end
      local step, admitted_expires = alg.step(state, now, permits, max_wait, p)
      local next_state, expires
      local rs = 0
      if step.resetAfterMicros > 0 then
        rs = reply_value(step.resetAfterMicros)
      end
      if step.allowed then
        next_state, expires = step.admitted, admitted_expires
        local w, l = 0, -1
        if step.waitMicros > 0 then
          w = reply_value(step.waitMicros)
        end
        if step.lease >= 0 then
          l = reply_value(step.lease)
        end
        reply[k + 1], reply[k + 2], reply[k + 3], reply[k + 4], reply[k + 5] =
          1, reply_value(permits), reply_value(step.remaining), 0, rs
        reply[k + 6], reply[k + 7], reply[k + 8], reply[k + 9], reply[k + 10] = w, 1, l, 0, 0
      else
        next_state = step.rejected
        reply[k + 1], reply[k + 2], reply[k + 3], reply[k + 4], reply[k + 5] =
          0, 0, reply_value(step.remaining), reply_value(step.retryAfterMicros), rs
        reply[k + 6], reply[k + 7], reply[k + 8], reply[k + 9], reply[k + 10] = 0, 1, -1, 0, 0
      end
      if next_state ~= state or dirty then
        state, dirty, write, written = next_state, false, expires or true, true
        same_op = nil
      else
        same_op, same_amount, same_wait = op, amount, wait_arg
      end
    end
    k = k + 10
  end

  if write then
    S.store_state(key, alg, p, fingerprint, state, now, client_time, slack_ms, write ~= true and write or nil)
    if dedup_key then
      redis.call("SET", dedup_key, sluice_batch_text(reply, k), "PX", ARGV[6])
    end
  end
  reply[k + 1] = 0
  return reply
end
