-- algorithms/leaky_bucket.lua: line-by-line port of io.sluice.internal.algorithm.LeakyBucketAlgorithm.
-- The model (nginx limit_req's excess, burst and delay), the `last` quirk, the worked example and the
-- invariants are in the Java class's essay; this file only ports it. Module shape: docs/redis-script-protocol.md.
--
-- Parameters (LeakyBucket's record components after the name): limit, period (micros), burst, nodelay
-- ("1" | "0"), delay.
-- State (LeakyBucketAlgorithm.State): excess (milli-requests), last.
--
-- Numbers. limit*1000, burst*1000 and the excess are at most 10^12 (about 2^40) and the period at most 2^45,
-- but the leak (limit*1000 * elapsed, up to 2^93) and the wait (excess * period, up to 2^85) are products
-- past 2^53: they go through S.mul_div_floor / S.mul_div_ceil, exact as Arith.mulDivFloor / mulDivCeil. A
-- quotient past 2^53 is approximate, but always above 2^53 then, so it compares right with the exact bounds
-- below (MAX_TIME - now, MAX_TIME - last, maxWait, excess + 1000).
do
  local S = sluice

  local MAX_TIME = 9007199254740992
  local NEVER = S.FOREVER
  local ONE = 1000

  local M = {}

  M.fields = { { "excess", "int" }, { "last", "int" } }

  -- The constructor: rates and thresholds in milli-requests. noWaitMilli is the largest excess admitted
  -- with a zero wait (the wait floors to 0 slightly above delay).
  function M.parse(w)
    local p = {
      limit = S.arg_int(w[1]),
      period = S.arg_int(w[2]),
      burst = S.arg_int(w[3]),
      nodelay = S.arg_bool(w[4]),
      delay = S.arg_int(w[5]),
    }
    p.leakPerPeriod = p.limit * ONE
    p.burstMilli = p.burst * ONE
    if p.nodelay then
      p.delayMilli = p.burst * ONE
    else
      p.delayMilli = p.delay * ONE
    end
    p.noWaitMilli = math.min(p.burstMilli, p.delayMilli + S.ceil_div(p.leakPerPeriod, p.period) - 1)
    return p
  end

  -- Lua only (naming: Java's until, a Lua keyword).
  -- Java's until(at, now): at - now, at least 0; NEVER stays NEVER. ("until" is a Lua keyword.)
  local function untilAt(at, now)
    if at == NEVER then
      return NEVER
    end
    return math.max(0, at - now)
  end

  function M.expiresAt(state, p)
    local drained = S.mul_div_ceil(state.excess + ONE, p.period, p.leakPerPeriod)
    if drained > MAX_TIME - state.last then
      return NEVER
    end
    return state.last + drained
  end

  -- The excess a one-permit request would leave now: max(0, excess - leak + 1000); 0 for a new key.
  local function baseExcess(state, now, p)
    if state == nil then
      return 0
    end
    local leak = 0
    if now > state.last then
      leak = S.mul_div_floor(p.leakPerPeriod, now - state.last, p.period)
    end
    if leak >= state.excess + ONE then
      return 0
    end
    return state.excess + ONE - leak
  end

  -- Requests the queue takes on top of a state whose next one-permit request leaves base.
  local function room(base, p)
    if base > p.burstMilli then
      return 0
    end
    return S.floor_div(p.burstMilli - base, ONE) + 1
  end

  -- nginx's ngx_http_limit_req_account delay, in micros.
  local function delay(excess, p)
    if excess <= p.delayMilli then
      return 0
    end
    return S.mul_div_floor(excess - p.delayMilli, p.period, p.leakPerPeriod)
  end

  -- Time until permits would pass with no wait, if nothing else happened; NEVER if it cannot.
  local function retryAfter(state, now, permits, p)
    local allowedBase = p.noWaitMilli - (permits - 1) * ONE
    if allowedBase < 0 or state == nil then
      return NEVER -- a new key admits every request it ever will at once
    end
    local leakNeeded = state.excess + ONE - allowedBase
    if leakNeeded <= 0 then
      return 0
    end
    local elapsedNeeded = S.mul_div_ceil(leakNeeded, p.period, p.leakPerPeriod)
    if elapsedNeeded > MAX_TIME - state.last then
      return NEVER
    end
    return untilAt(state.last + elapsedNeeded, now)
  end

  function M.step(state, now, permits, maxWaitMicros, p)
    local base = baseExcess(state, now, p)
    local resetNow = 0
    if state ~= nil then
      resetNow = untilAt(M.expiresAt(state, p), now)
    end
    if permits == 0 then
      return S.allow(0, room(base, p), resetNow, state, state)
    end
    local excess = base + (permits - 1) * ONE
    local wait = NEVER
    if excess <= p.burstMilli then
      wait = delay(excess, p)
    end
    if wait == NEVER or wait > maxWaitMicros or wait > MAX_TIME - now then
      return S.reject(room(base, p), retryAfter(state, now, permits, p), resetNow, state)
    end
    -- nginx: if (ms) lr->last = now; a clock that went back keeps the later last.
    local last = now
    if state ~= nil and now <= state.last then
      last = state.last
    end
    local after = { excess = excess, last = last }
    return S.allow(wait, S.floor_div(p.burstMilli - excess, ONE), untilAt(M.expiresAt(after, p), now), after, state)
  end

  function M.grantable(state, now, permits, p)
    local base = baseExcess(state, now, p)
    if permits <= 0 or base > p.noWaitMilli then
      return 0
    end
    return math.min(permits, S.floor_div(p.noWaitMilli - base, ONE) + 1)
  end

  -- Excess and last are kept; the new rate leaks from last on.
  function M.migrate(state, previous, now, p)
    return state
  end

  -- Settling a ticket: LeakyBucketAlgorithm's Settleable (mark, settle), whose comment derives it. The mark is
  -- when the queue the charge left would have drained (at most MAX_TIME).
  local MAX_EXCESS = 1000000000000

  function M.mark(admitted, now, p)
    return math.min(M.expiresAt(admitted, p), MAX_TIME)
  end

  function M.settle(state, now, mark, estimate, actual, p)
    if actual == estimate or (state == nil and actual < estimate) then
      return state
    end
    local base = baseExcess(state, now, p)
    local last = now
    if state ~= nil and now <= state.last then
      last = state.last
    end
    if actual > estimate then
      local excess = S.add_sat(base, S.mul_sat(actual - estimate - 1, ONE))
      return { excess = math.min(MAX_EXCESS, excess), last = last }
    end
    if mark <= now then
      return state
    end
    local ahead = S.mul_div_floor(p.leakPerPeriod, mark - now, p.period)
    local level = base - math.min(S.mul_sat(estimate - actual, ONE), ahead)
    if level <= 0 then
      return nil
    end
    return { excess = math.max(0, level - ONE), last = last }
  end

  ALG["leaky_bucket"] = M
end
