-- algorithms/gcra.lua: line-by-line port of io.sluice.internal.algorithm.GcraAlgorithm.
-- The model (redis_rate's GCRA), the worked example and the invariant are in the Java class's essay; this file
-- only ports it. Module shape: docs/redis-script-protocol.md.
--
-- Parameters (Gcra's record components after the name): limit, period (micros), burst.
--
-- State: the Java State(tat, refunded), TAT as two exact integers, TAT = allowAt + burstOffset:
--   allowAt      TAT - B of the admission that wrote it (its allow_at), in [-B, MAX_TIME]
--   burstOffset  that B (burst * T of the parameters it was admitted under), in [1, 2^53]
-- TAT itself is up to MAX_TIME + B, which passes 2^53 (where doubles hold only even integers) as soon as
-- now + B does: near the end of the clock, or today with B near 2^53. Split in two, every Java expression in
-- tat is computed exactly: differences with now first (allowAt - now is within [-2^53, 2^53]), offsets added
-- only when the result fits, comparisons with MAX_TIME written as exact differences. A migration keeps TAT
-- (Java returns the state unchanged), so it keeps both fields too, whatever the new B.
--   refunded     the refund clock (µs by which refunds moved the TAT back; GcraAlgorithm's settlement), stored
--                as a third field only when positive: a key never refunded into keeps the two-field value that
--                earlier versions wrote and read. M.load reads both shapes, M.fields_of tells store_limit which
--                to write; nil means 0.
-- Stored: the TAT alone as ONE integer with three fingerprint digits (M.to_int, M.from_int; lib/state_int.lua),
-- which Redis keeps inside the key's object, whenever it holds the state: no refund clock, 1 <= TAT <= MAX_TIME.
-- Otherwise, and in keys written before that form, the fields above.
do
  local S = sluice

  local MAX_TIME = 9007199254740992
  local NEVER = S.FOREVER

  local M = {}

  M.fields = { { "allowAt", "int" }, { "burstOffset", "int" } }
  local REFUNDED_FIELDS = { { "allowAt", "int" }, { "burstOffset", "int" }, { "refunded", "int" } }

  -- Ticket.MAX_LIFETIME, µs: a refund clock is kept no longer (GcraAlgorithm.MAX_TICKET_LIFETIME).
  local MAX_TICKET_LIFETIME = 86400000000

  -- Lua only (storage): the fields a state is written with, two unless it has been refunded into.
  function M.fields_of(state)
    if state.refunded ~= nil and state.refunded > 0 then
      return REFUNDED_FIELDS
    end
    return M.fields
  end

  -- Lua only (storage): the state as ONE integer, its TAT (lib/state_int.lua), when that holds all of it: no
  -- refund clock and 1 <= TAT <= MAX_TIME (TAT exact). Otherwise nil: the fields above.
  function M.to_int(state)
    if (state.refunded ~= nil and state.refunded > 0) or state.allowAt > MAX_TIME - state.burstOffset
        or state.allowAt < 1 - state.burstOffset then
      return nil
    end
    return state.allowAt + state.burstOffset
  end

  -- Lua only (storage): the state of a stored TAT, split with the current B: only allowAt + burstOffset counts
  -- (see State above), and both parts are exact here (1 <= TAT <= 2^53).
  function M.from_int(tat, p)
    return { allowAt = tat - p.burstOffset, burstOffset = p.burstOffset }
  end

  -- Lua only (storage): a stored TAT (M.to_int), two fields (never refunded into, as earlier versions wrote) or
  -- three.
  function M.load(key, p, fingerprint)
    local value, exists = S.get_value(key)
    if value == nil then
      return nil, nil, exists
    end
    local state, stored = S.decode_int(value, fingerprint, p, M.from_int)
    if state ~= nil then
      return state, stored, true
    end
    state, stored = S.decode_state(value, M.fields)
    if state == nil then
      state, stored = S.decode_state(value, REFUNDED_FIELDS)
    end
    return state, stored, true
  end

  -- Java: State(newTat, refunded of the state it came from), the admitted state (allowAt = newTat - B).
  local function admitted(state, allowAt, p)
    local refunded = nil
    if state ~= nil then
      refunded = state.refunded
    end
    return { allowAt = allowAt, burstOffset = p.burstOffset, refunded = refunded }
  end

  -- The constructor: emission interval T = ceil(period / limit), burst offset B = burst * T (<= 2^53, Gcra
  -- validates it).
  function M.parse(w)
    local p = { limit = S.arg_int(w[1]), period = S.arg_int(w[2]), burst = S.arg_int(w[3]) }
    p.interval = S.ceil_div(p.period, p.limit)
    p.burstOffset = p.burst * p.interval
    return p
  end

  -- Lua only (exactness: tat - now kept as two exact parts).
  -- Java's tat = max(TAT, now) (now for a new key), returned as tat - now, split as
  -- (ahead, offset) with tat - now = ahead + offset: both exact, ahead >= -offset.
  -- (TAT >= now is allowAt >= now - burstOffset: both sides exact.)
  local function tatFromNow(state, now)
    if state ~= nil and state.allowAt >= now - state.burstOffset then
      return state.allowAt - now, state.burstOffset
    end
    return 0, 0
  end

  local function duration(micros)
    if micros > MAX_TIME then
      return NEVER
    end
    -- math.max(0, micros), written out (speed: a call into C costs about 800 instructions; the same value).
    if micros > 0 then
      return micros
    end
    return 0
  end

  -- Lua only (exactness: tat - now kept as two exact parts).
  -- Java: duration(tat - now), with tat - now = ahead + offset added only when it fits.
  local function durationOf(ahead, offset)
    if ahead > MAX_TIME - offset then
      return NEVER
    end
    return duration(ahead + offset)
  end

  -- Whole permits that conform now: floor((now - (tat - B)) / T), at least 0. The slack
  -- now - tat + B = (B - offset) - ahead is at most B when positive: exact then.
  local function available(ahead, offset, p)
    local slack = (p.burstOffset - offset) - ahead
    if slack <= 0 then
      return 0
    end
    return S.floor_div(slack, p.interval)
  end

  function M.step(state, now, permits, maxWaitMicros, p)
    local ahead, offset = tatFromNow(state, now)
    if permits == 0 then
      return S.allow(0, available(ahead, offset, p), durationOf(ahead, offset), state, state)
    end
    if permits > p.burst then
      return S.reject(available(ahead, offset, p), NEVER, durationOf(ahead, offset), state)
    end
    -- Java: newTat = tat + n*T; allowAt = newTat - B. Here allowAt - now = n*T - slack (slack as in
    -- available): exact when it is at most 2^53, and beyond MAX_TIME either way when it is not.
    local slack = (p.burstOffset - offset) - ahead
    local untilAllowed = permits * p.interval - slack
    if untilAllowed <= 0 then
      -- newTat - now = untilAllowed + B, in [0, B]
      return S.allow(0, S.floor_div(-untilAllowed, p.interval), duration(untilAllowed + p.burstOffset),
          admitted(state, now + untilAllowed, p), state)
    end
    -- Java: allowAt <= MAX_TIME ? duration(allowAt - now) : NEVER, with allowAt <= MAX_TIME written as
    -- n*T - MAX_TIME <= slack - now: the left side is exact, the right one too unless below -2^53 (false then).
    local wait = NEVER
    if permits * p.interval - MAX_TIME <= slack - now then
      wait = duration(untilAllowed)
    end
    if maxWaitMicros > 0 and wait ~= NEVER and wait <= maxWaitMicros then
      return S.allow(wait, 0, durationOf(untilAllowed, p.burstOffset),
          admitted(state, now + untilAllowed, p), state)
    end
    return S.reject(available(ahead, offset, p), wait, durationOf(ahead, offset), state)
  end

  function M.grantable(state, now, permits, p)
    local ahead, offset = tatFromNow(state, now)
    return math.min(permits, available(ahead, offset, p))
  end

  -- Java: until = tat (+ min(refunded, MAX_TICKET_LIFETIME) when refunded into); until > MAX_TIME ? NEVER :
  -- until, with TAT = allowAt + burstOffset: MAX_TIME - burstOffset - extra is exact (each below 2^53).
  function M.expiresAt(state, p)
    local extra = 0
    if state.refunded ~= nil then
      extra = math.min(state.refunded, MAX_TICKET_LIFETIME)
    end
    if state.allowAt > MAX_TIME - state.burstOffset - extra then
      return NEVER
    end
    return state.allowAt + state.burstOffset + extra
  end

  -- Keeps the TAT (both of its fields); the new T and B judge it at once.
  function M.migrate(state, previous, now, p)
    return state
  end

  -- Settling a ticket: GcraAlgorithm's Settleable (mark, settle), whose comment derives it (the refund clock).
  -- The mark is V = TAT + refunded after the charge, at most MAX_TIME.
  function M.mark(admitted, now, p)
    local refunded = admitted.refunded or 0
    if admitted.allowAt > MAX_TIME - admitted.burstOffset - refunded then
      return MAX_TIME
    end
    return admitted.allowAt + admitted.burstOffset + refunded
  end

  function M.settle(state, now, mark, estimate, actual, p)
    if actual > estimate then
      local tat = now
      local refunded = nil
      if state ~= nil then
        tat = math.max(state.allowAt + state.burstOffset, now)
        refunded = state.refunded
      end
      tat = math.min(MAX_TIME, S.add_sat(tat, S.mul_sat(actual - estimate, p.interval)))
      return { allowAt = tat - p.burstOffset, burstOffset = p.burstOffset, refunded = refunded }
    end
    if actual == estimate or state == nil then
      return state
    end
    local refunded = state.refunded or 0
    -- Java: back = min(r*T, A' - now, TAT - now, MAX_TIME - refunded), A' - now = mark - refunded - now. The
    -- differences are exact (or, past -2^53, negative either way); TAT - now = (allowAt - now) + B is inexact
    -- only above 2^53, where A' - now (at most 2^53) is the smaller.
    local back = math.min(S.mul_sat(estimate - actual, p.interval), mark - refunded - now)
    back = math.min(back, (state.allowAt - now) + state.burstOffset, MAX_TIME - refunded)
    if back <= 0 then
      return state
    end
    return { allowAt = state.allowAt - back, burstOffset = state.burstOffset, refunded = refunded + back }
  end

  ALG["gcra"] = M
end
