-- algorithms/sliding_window.lua: line-by-line port of io.sluice.internal.algorithm.SlidingWindowAlgorithm.
-- The model, the invariants, the derivation of the exact retry-after and expiry, and the worked example are in
-- the Java class's essay; this file only ports it. Module shape: docs/redis-script-protocol.md.
--
-- Parameters (SlidingWindow's record components after the name): limit, window (micros).
-- State (SlidingWindowAlgorithm.State): windowStart, previous, current.
--
-- Arithmetic: the products previous * (W - e) and (b + 1) * W reach 2^85, far past 2^53, so they go through
-- the exact sluice.mul_div_floor / mul_div_ceil (lib/arith_mul_div.lua), which do what the essay's recipe
-- does (24-bit limbs, then a long division with every intermediate below 2^53); their quotients are at most
-- previous or W. The sums windowStart + 2W and windowStart + lifetime can pass 2^53: comparisons and
-- durations are written as differences from windowStart, which are exact, and only expiresAt adds (sluice.time_plus).
do
  local S = sluice
  local M = {}

  M.fields = { { "windowStart", "int" }, { "previous", "int" }, { "current", "int" } }

  function M.parse(w)
    return { limit = S.arg_int(w[1]), window = S.arg_int(w[2]) }
  end

  local function state(windowStart, previous, current)
    return { windowStart = windowStart, previous = previous, current = current }
  end

  -- Offset into the next window from which count, as the previous window's, contributes 0.
  local function fadesAt(count, p)
    return p.window + 1 - S.ceil_div(p.window, count)
  end

  -- Lua only (exactness: Java's expiresAt without the sum that could pass 2^53).
  -- expiresAt(s) - windowStart: Java's expiresAt without the windowStart it adds, so that durations stay exact.
  local function lifetime(s, p)
    if s.current > 0 then
      return p.window + fadesAt(s.current, p)
    end
    if s.previous > 0 then
      return fadesAt(s.previous, p)
    end
    return 0
  end

  -- The counts as seen from the aligned window containing t (t is never before the state's window). An
  -- expired state is no state: kept as the previous count, its current count would weigh again for a clock
  -- stepping back towards this window's start. (t - windowStart >= lifetime is Java's t >= expiresAt(s)
  -- without the sum, which can pass 2^53.)
  local function rolled(s, t, p)
    local start = t - S.floor_mod(t, p.window)
    if s == nil or t - s.windowStart >= lifetime(s, p) then
      return state(start, 0, 0)
    end
    if start == s.windowStart then
      return s
    end
    return state(start, s.current, 0)
  end

  local function estimate(s, elapsed, p)
    return S.mul_div_floor(s.previous, p.window - elapsed, p.window) + s.current
  end

  -- The smallest offset e in [0, W] with floor(count * (W - e) / W) <= budget, for a count that is the previous
  -- window's.
  local function firstPassing(count, budget, p)
    if count <= budget then
      return 0
    end
    return p.window + 1 - S.mul_div_ceil(budget + 1, p.window, count)
  end

  -- See the essay: first the rest of the current window, else the next one.
  local function retryAfter(s, elapsed, permits, p)
    if permits > p.limit then
      return S.FOREVER -- no window ever admits more than the limit: waiting never helps (Arith.NEVER)
    end
    local budget = p.limit - permits - s.current
    if budget >= 0 and s.previous > 0 then
      local e = firstPassing(s.previous, budget, p)
      if e < p.window then
        return e - elapsed
      end
    end
    local nextOffset = 0
    if s.current ~= 0 then
      nextOffset = firstPassing(s.current, p.limit - permits, p)
    end
    return p.window - elapsed + nextOffset
  end

  -- Time from t until the state means nothing any more: Java's expiresAt(s) - t, as a difference.
  local function untilGone(s, t, p)
    if s.previous == 0 and s.current == 0 then
      return 0
    end
    return math.max(0, lifetime(s, p) - (t - s.windowStart))
  end

  local function remaining(counted, p)
    return math.max(0, p.limit - counted)
  end

  function M.step(s, now, permits, maxWaitMicros, p)
    local t = now
    if s ~= nil then
      t = math.max(now, s.windowStart)
    end
    local seen = rolled(s, t, p)
    local elapsed = t - seen.windowStart
    local est = estimate(seen, elapsed, p)
    if permits == 0 or est + permits <= p.limit then
      local admitted = s
      local after = seen
      if permits ~= 0 then
        admitted = state(seen.windowStart, seen.previous, seen.current + permits)
        after = admitted
      end
      return S.allow(0, remaining(est + permits, p), untilGone(after, t, p), admitted, s)
    end
    return S.reject(remaining(est, p), retryAfter(seen, elapsed, permits, p), untilGone(seen, t, p), s)
  end

  function M.grantable(s, now, permits, p)
    local t = now
    if s ~= nil then
      t = math.max(now, s.windowStart)
    end
    local seen = rolled(s, t, p)
    local est = estimate(seen, t - seen.windowStart, p)
    return math.max(0, math.min(permits, p.limit - est))
  end

  -- Passes 2^53 by up to 2W when windowStart is near MAX_TIME: see sluice.time_plus.
  function M.expiresAt(s, p)
    return S.time_plus(s.windowStart, lifetime(s, p))
  end

  -- Keeps both counts when only the limit changed; a new window length restarts counting.
  function M.migrate(s, previous, now, p)
    if previous.window == p.window then
      return s
    end
    return nil
  end

  -- Synced mode (SyncableAlgorithm.absorb): permits admitted at admittedAt by another node, counted whatever the
  -- limit says: in current when admittedAt is in the window of now, in previous when it is in the one before,
  -- dropped when earlier. Counts saturate at Limit.MAX_COUNT + 1 (SlidingWindowAlgorithm.COUNT_CEILING).
  local COUNT_CEILING = 1000000000001

  function M.absorb(s, now, permits, admittedAt, p)
    local t = now
    if s ~= nil then
      t = math.max(now, s.windowStart)
    end
    local a = math.min(admittedAt, t)
    local start = t - S.floor_mod(t, p.window)
    local from = a - S.floor_mod(a, p.window)
    if permits == 0 or start - from > p.window then
      return s
    end
    local seen = rolled(s, t, p)
    if from == start then
      return state(start, seen.previous, math.min(COUNT_CEILING, seen.current + permits))
    end
    return state(start, math.min(COUNT_CEILING, seen.previous + permits), seen.current)
  end

  -- From then on absorb drops permits admitted at admittedAt: two windows after the start of theirs; past 2^53 by
  -- up to 2W (sluice.time_plus).
  function M.absorbableUntil(admittedAt, p)
    return S.time_plus(admittedAt - S.floor_mod(admittedAt, p.window), 2 * p.window)
  end

  -- Settling a ticket: SlidingWindowAlgorithm's Settleable (mark, settle). The mark is the aligned start of
  -- the window charged: a refund lowers `current` while it is that window, `previous` the window after.
  function M.mark(admitted, now, p)
    return admitted.windowStart
  end

  function M.settle(s, now, mark, estimate, actual, p)
    local t = now
    if s ~= nil then
      t = math.max(now, s.windowStart)
    end
    local seen = rolled(s, t, p)
    if actual > estimate then
      return state(seen.windowStart, seen.previous, math.min(COUNT_CEILING, seen.current + (actual - estimate)))
    end
    local refund = estimate - actual
    local after
    if refund == 0 then
      return s
    elseif seen.windowStart == mark then
      after = state(mark, seen.previous, math.max(0, seen.current - refund))
    elseif seen.windowStart - p.window == mark then
      after = state(seen.windowStart, math.max(0, seen.previous - refund), seen.current)
    else
      return s
    end
    if after.previous == 0 and after.current == 0 then
      return nil
    end
    return after
  end

  ALG["sliding_window"] = M
end
