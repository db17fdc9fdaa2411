-- algorithms/refresh_period.lua: line-by-line port of io.sluice.internal.algorithm.RefreshPeriodAlgorithm.
-- The model, the worked example, the bounds and the expiry are in the Java class's essay; this file only ports
-- it. Module shape: docs/redis-script-protocol.md.
--
-- Parameters (RefreshPeriod's record components after the name): limitForPeriod, refreshPeriod (micros),
-- timeout (micros; only the facade's acquire reads it). State (RefreshPeriodAlgorithm.State): origin,
-- activeCycle, activePermissions.
--
-- Numbers. The essay's two guards keep every stored integer below 2^53: activePermissions is in
-- [-2^52, limit] and every stored cycle starts at or before MAX_TIME. Cycle starts computed beyond the stored
-- ones (the next cycle, far candidates, expiry) can pass 2^53; they go through sluice.add_sat / mul_sat, which
-- keep such a value beyond 2^53 so that it compares with MAX_TIME and now as Java's exact long does, and
-- every time difference that is reported is taken between exact values. Java's plain additions of cycle
-- numbers are add_sat here for the same reason (Java's never overflow, so they are equal in long).
do
  local S = sluice

  local MAX_TIME = 9007199254740992 -- Arith.MAX_TIME = 2^53
  local MAX_DEBT = 4503599627370496 -- RefreshPeriodAlgorithm.MAX_DEBT = 2^52
  local NEVER = math.huge           -- Long.MAX_VALUE

  local M = {}

  M.fields = { { "origin", "int" }, { "activeCycle", "int" }, { "activePermissions", "int" } }

  function M.parse(w)
    return {
      permitsPerCycle = S.arg_int(w[1]),
      periodMicros = S.arg_int(w[2]),
      timeoutMicros = S.arg_int(w[3]),
    }
  end

  -- Lua only (Java's State record's constructor).
  local function state(origin, activeCycle, activePermissions)
    return { origin = origin, activeCycle = activeCycle, activePermissions = activePermissions }
  end

  -- Lua only (Java's View record's constructor).
  -- The state refreshed at an effective now that is never before the active cycle's start (Java's View).
  local function newView(origin, now, cycle, available)
    return { origin = origin, now = now, cycle = cycle, available = available }
  end

  local function cycleStart(origin, cycle, p)
    return S.add_sat(origin, S.mul_sat(cycle, p.periodMicros))
  end

  local function fresh(now, p)
    return state(now, 0, p.permitsPerCycle)
  end

  -- min(available + elapsedCycles * L, L) without overflow: compare cycles, not products.
  local function refreshed(available, elapsedCycles, p)
    if elapsedCycles == 0 then
      return available -- within a cycle nothing is refilled, even above a lowered L
    end
    if available >= p.permitsPerCycle then
      return p.permitsPerCycle
    end
    local cyclesToFull = S.ceil_div(p.permitsPerCycle - available, p.permitsPerCycle)
    if elapsedCycles >= cyclesToFull then
      return p.permitsPerCycle
    end
    return available + elapsedCycles * p.permitsPerCycle
  end

  -- calculateNextState's refresh at an effective now that is never before the active cycle's start.
  -- (The active cycle's start is at most MAX_TIME, so it is exact, and so is the division.)
  local function view(s, now, p)
    local origin = s.origin
    local effectiveNow = math.max(now, cycleStart(origin, s.activeCycle, p))
    local cycle = math.floor((effectiveNow - origin) / p.periodMicros)
    return newView(origin, effectiveNow, cycle, refreshed(s.activePermissions, cycle - s.activeCycle, p))
  end

  -- nanosToWaitForPermission, in micros, saturated. toNextCycle is Java's cycleStart(origin, cycle + 1) -
  -- now, written as the period minus the time since the current cycle's start: that start is at most now,
  -- so every term is exact, while the next start itself may pass 2^53.
  local function waitFor(v, permits, p)
    if v.available >= permits then
      return 0
    end
    local toNextCycle = p.periodMicros - (v.now - cycleStart(v.origin, v.cycle, p))
    local missingAfterNextRefill = S.add_sat(permits, -(v.available + p.permitsPerCycle))
    local fullCycles = 0
    if missingAfterNextRefill > 0 then
      fullCycles = S.ceil_div(missingAfterNextRefill, p.permitsPerCycle)
    end
    return S.add_sat(S.mul_sat(fullCycles, p.periodMicros), toNextCycle)
  end

  -- reservePermissions' test, plus the two bounds of the essay.
  local function admits(v, permits, waitMicros, maxWaitMicros)
    return waitMicros <= maxWaitMicros
        and waitMicros <= MAX_TIME - v.now
        and S.add_sat(v.available, -permits) >= -MAX_DEBT
  end

  -- Time from the view's now until a refresh brings available back to L; NEVER when that is past the end
  -- of the clock (the Java does the same: such a time is not a time of the clock domain).
  local function resetAfter(v, available, p)
    if available >= p.permitsPerCycle then
      return 0
    end
    local cycles = S.ceil_div(p.permitsPerCycle - available, p.permitsPerCycle)
    local full = cycleStart(v.origin, S.add_sat(v.cycle, cycles), p)
    if full > MAX_TIME then
      return NEVER
    end
    return full - v.now
  end

  -- candidate if it is later than now, within the clock, admits and beats best.
  local function earliestAdmitting(s, now, best, candidate, permits, maxWait, p)
    if candidate <= now or candidate >= best or candidate > MAX_TIME then
      return best
    end
    local v = view(s, candidate, p)
    if admits(v, permits, waitFor(v, permits, p), maxWait) then
      return candidate
    end
    return best
  end

  -- The earliest time after a rejection at which the same request is admitted, or NEVER: the candidates
  -- of the Java retryAfter (its comment explains why they are the only ones), evaluated in the same order.
  local function retryAfter(s, v, permits, maxWaitMicros, p)
    local usable = S.add_sat(v.now, waitFor(v, permits, p))
    local best = earliestAdmitting(s, v.now, NEVER, usable - math.min(maxWaitMicros, usable), permits,
      maxWaitMicros, p)

    local debtFloor = S.add_sat(permits, -MAX_DEBT)
    if debtFloor > p.permitsPerCycle then -- later cycles hold at most L: the debt guard never holds there
      if best == NEVER then
        return NEVER
      end
      return best - v.now
    end
    if v.available < debtFloor then
      local cycle = S.add_sat(v.cycle, S.ceil_div(debtFloor - v.available, p.permitsPerCycle))
      best = earliestAdmitting(s, v.now, best, cycleStart(v.origin, cycle, p), permits, maxWaitMicros, p)
    end

    local cappedCycle
    if v.available >= p.permitsPerCycle then
      cappedCycle = v.cycle
      if v.available > p.permitsPerCycle then
        cappedCycle = S.add_sat(cappedCycle, 1)
      end
    else
      cappedCycle = S.add_sat(v.cycle, S.ceil_div(p.permitsPerCycle - v.available, p.permitsPerCycle))
    end
    local cappedStart = cycleStart(v.origin, cappedCycle, p)
    if cappedStart <= MAX_TIME then
      best = earliestAdmitting(s, v.now, best, cappedStart, permits, maxWaitMicros, p)
      local capped = newView(v.origin, cappedStart, cappedCycle, p.permitsPerCycle)
      local cappedUsable = S.add_sat(cappedStart, waitFor(capped, permits, p))
      best = earliestAdmitting(s, v.now, best, cappedUsable - math.min(maxWaitMicros, cappedUsable), permits,
        maxWaitMicros, p)
    end
    if best == NEVER then
      return NEVER
    end
    return best - v.now
  end

  function M.step(s, now, permits, maxWaitMicros, p)
    local current = s
    if current == nil then
      current = fresh(now, p)
    end
    local v = view(current, now, p)
    if permits == 0 then
      return S.allow(0, math.max(0, v.available), resetAfter(v, v.available, p), s, s)
    end
    local waitMicros = waitFor(v, permits, p)
    if admits(v, permits, waitMicros, maxWaitMicros) then
      local left = v.available - permits
      local nextState = state(current.origin, v.cycle, left)
      return S.allow(waitMicros, math.max(0, left), resetAfter(v, left, p), nextState, s)
    end
    -- a rejection leaves no state behind, so on a new key the same request meets a new key every time
    local retry = NEVER
    if s ~= nil then
      retry = retryAfter(current, v, permits, 0, p)
    end
    return S.reject(math.max(0, v.available), retry, resetAfter(v, v.available, p), s)
  end

  function M.grantable(s, now, permits, p)
    local current = s
    if current == nil then
      current = fresh(now, p)
    end
    local v = view(current, now, p)
    return math.min(permits, math.max(0, v.available))
  end

  -- Past the end of the clock (a long debt, a last cycle ending after MAX_TIME) every expiry means the same,
  -- "not before MAX_TIME", and no double would hold Java's exact long: the answer is then MAX_TIME + 2, which
  -- the dispatcher's now >= expiresAt treats as Java's value, and which keeps the TTL arithmetic exact.
  function M.expiresAt(s, p)
    local available = s.activePermissions
    local cyclesToFull = 0
    if available < p.permitsPerCycle then
      cyclesToFull = S.ceil_div(p.permitsPerCycle - available, p.permitsPerCycle)
    end
    local at = cycleStart(s.origin, S.add_sat(s.activeCycle, math.max(1, cyclesToFull) + 1), p)
    if at > MAX_TIME then
      return MAX_TIME + 2
    end
    return at
  end

  -- A limitForPeriod change is Resilience4j's changeLimitForPeriod (the state is kept and the new limit
  -- applies from the next refresh); a refreshPeriod change brings the state up to date at now under the
  -- previous parameters and recounts the active cycle under the new period, from the same origin.
  function M.migrate(s, previous, now, p)
    if s == nil or previous.periodMicros == p.periodMicros then
      return s -- changeLimitForPeriod: the new limit applies from the next refresh
    end
    local v = view(s, now, previous)
    local cycle = math.floor((v.now - s.origin) / p.periodMicros)
    return state(s.origin, cycle, v.available)
  end

  ALG["refresh_period"] = M
end
