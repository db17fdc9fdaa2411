-- algorithms/gcra.lua: line-by-line port of io.sluice.internal.algorithm.GcraAlgorithm.
-- The model (redis_rate's GCRA), the worked example and the invariant are in the Java class's essay; this file
-- only ports it. Module shape: docs/redis-script-protocol.md.
--
-- Parameters (Gcra's record components after the name): limit, period (micros), burst.
--
-- State: the Java State(tat) as two exact integers, TAT = allowAt + burstOffset:
--   allowAt      TAT - B of the admission that wrote it (its allow_at), in [-B, MAX_TIME]
--   burstOffset  that B (burst * T of the parameters it was admitted under), in [1, 2^53]
-- TAT itself is up to MAX_TIME + B, which passes 2^53 (where doubles hold only even integers) as soon as
-- now + B does: near the end of the clock, or today with B near 2^53. Split in two, every Java expression in
-- tat is computed exactly: differences with now first (allowAt - now is within [-2^53, 2^53]), offsets added
-- only when the result fits, comparisons with MAX_TIME written as exact differences. A migration keeps TAT
-- (Java returns the state unchanged), so it keeps both fields too, whatever the new B.
do
  local S = sluice

  local MAX_TIME = 9007199254740992
  local NEVER = S.FOREVER

  local M = {}

  M.fields = { { "allowAt", "int" }, { "burstOffset", "int" } }

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
    return math.max(0, micros)
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
          { allowAt = now + untilAllowed, burstOffset = p.burstOffset }, state)
    end
    -- Java: allowAt <= MAX_TIME ? duration(allowAt - now) : NEVER, with allowAt <= MAX_TIME written as
    -- n*T - MAX_TIME <= slack - now: the left side is exact, the right one too unless below -2^53 (false then).
    local wait = NEVER
    if permits * p.interval - MAX_TIME <= slack - now then
      wait = duration(untilAllowed)
    end
    if maxWaitMicros > 0 and wait ~= NEVER and wait <= maxWaitMicros then
      return S.allow(wait, 0, durationOf(untilAllowed, p.burstOffset),
          { allowAt = now + untilAllowed, burstOffset = p.burstOffset }, state)
    end
    return S.reject(available(ahead, offset, p), wait, durationOf(ahead, offset), state)
  end

  function M.grantable(state, now, permits, p)
    local ahead, offset = tatFromNow(state, now)
    return math.min(permits, available(ahead, offset, p))
  end

  -- Java: tat > MAX_TIME ? NEVER : tat, with TAT = allowAt + burstOffset.
  function M.expiresAt(state, p)
    if state.allowAt > MAX_TIME - state.burstOffset then
      return NEVER
    end
    return state.allowAt + state.burstOffset
  end

  -- Keeps the TAT (both of its fields); the new T and B judge it at once.
  function M.migrate(state, previous, now, p)
    return state
  end

  -- Settling a ticket: GcraAlgorithm's Settleable (mark, settle), whose comment derives it. The mark is the
  -- TAT the charge left (at most MAX_TIME); TAT = allowAt + burstOffset, written back under this B.
  -- Not reached for now: Settling refuses gcra (a refund after another ticket's refund can pass the burst
  -- bound; GcraAlgorithm's comment has the example), and the store refuses it before the script runs.
  function M.mark(admitted, now, p)
    return math.min(admitted.allowAt + admitted.burstOffset, MAX_TIME)
  end

  function M.settle(state, now, mark, estimate, actual, p)
    if actual > estimate then
      local tat = now
      if state ~= nil then
        tat = math.max(state.allowAt + state.burstOffset, now)
      end
      tat = math.min(MAX_TIME, S.add_sat(tat, S.mul_sat(actual - estimate, p.interval)))
      return { allowAt = tat - p.burstOffset, burstOffset = p.burstOffset }
    end
    if actual == estimate or state == nil or mark <= now then
      return state
    end
    local tat = state.allowAt + state.burstOffset
    if tat <= now then
      return state
    end
    local back = math.min(S.mul_sat(estimate - actual, p.interval), mark - now)
    tat = math.max(now, tat - back)
    if tat <= now then
      return nil
    end
    return { allowAt = tat - p.burstOffset, burstOffset = p.burstOffset }
  end

  ALG["gcra"] = M
end
