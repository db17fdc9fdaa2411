-- algorithms/fixed_window.lua: line-by-line port of io.sluice.internal.algorithm.FixedWindowAlgorithm.
-- The model, the invariants and the worked example are in the Java class's essay; this file only ports it.
-- Module shape: docs/redis-script-protocol.md.
--
-- Parameters (FixedWindow's record components after the name): limit, window (micros), align
-- ("epoch" | "first_request"), countRejected ("1" | "0").
-- State (FixedWindowAlgorithm.State): windowStart, count.
do
  local S = sluice

  -- Above every valid limit, so a saturated count rejects exactly as the true one (Limit.MAX_COUNT + 1).
  local COUNT_CEILING = 1000000000001

  local M = {}

  M.fields = { { "windowStart", "int" }, { "count", "int" } }

  function M.parse(w)
    return {
      limit = S.arg_int(w[1]),
      window = S.arg_int(w[2]),
      align = w[3],
      countRejected = S.arg_bool(w[4]),
    }
  end

  -- A now before the window start counts as no time passed.
  local function clock(state, now)
    if state == nil then
      return now
    end
    return math.max(now, state.windowStart)
  end

  -- The count of the window containing t: the state's count while its window lasts, else 0.
  -- (t - windowStart < window rather than t < windowStart + window: the sum can pass 2^53.)
  local function countAt(state, t, p)
    if state ~= nil and t - state.windowStart < p.window then
      return state.count
    end
    return 0
  end

  -- Where a window opened by a request at t starts.
  local function openingAt(t, p)
    if p.align == "epoch" then
      return t - S.floor_mod(t, p.window)
    end
    return t
  end

  local function remaining(charged, p)
    return math.max(0, p.limit - charged)
  end

  function M.step(state, now, permits, maxWaitMicros, p)
    local t = clock(state, now)
    local count = countAt(state, t, p)
    local start
    if count > 0 then
      start = state.windowStart
    else
      start = openingAt(t, p)
    end
    local untilEnd = p.window - (t - start)
    local recorded = state
    if permits ~= 0 then
      recorded = { windowStart = start, count = math.min(COUNT_CEILING, count + permits) }
    end
    local rejected = state
    if p.countRejected then
      rejected = recorded
    end
    if permits == 0 or count + permits <= p.limit then
      local after = count + permits
      local reset = 0
      if after > 0 then
        reset = untilEnd
      end
      return S.allow(0, remaining(after, p), reset, recorded, rejected)
    end
    -- count > 0 here: a fresh window admits every request of at most limit permits.
    local charged = count
    if rejected ~= state then
      charged = rejected.count
    end
    return S.reject(remaining(charged, p), untilEnd, untilEnd, rejected)
  end

  function M.grantable(state, now, permits, p)
    local count = countAt(state, clock(state, now), p)
    return math.max(0, math.min(permits, p.limit - count))
  end

  -- Can pass 2^53 by up to one window when now is near MAX_TIME (year 2255): sluice.time_plus keeps such a sum
  -- above 2^53 (a plain sum 2^53 + 1 rounds to 2^53, and a now of 2^53 would drop a live window).
  function M.expiresAt(state, p)
    return S.time_plus(state.windowStart, p.window)
  end

  -- Keeps the count when only the limit (or countRejected) changed; a new window length or alignment restarts.
  function M.migrate(state, previous, now, p)
    if previous.window == p.window and previous.align == p.align then
      return state
    end
    return nil
  end

  -- Synced mode (SyncableAlgorithm.absorb): permits admitted at admittedAt by another node, counted whatever the
  -- limit says in the window containing admittedAt while it still matters at now. Steps 1 to 4 of the Java
  -- essay ("Absorbing permits admitted elsewhere"), in order.
  function M.absorb(state, now, permits, admittedAt, p)
    local t = clock(state, now)
    local a = math.min(admittedAt, t)
    if permits == 0 or t - openingAt(a, p) >= p.window then
      return state
    end
    local count = countAt(state, t, p)
    if count > 0 then
      return { windowStart = state.windowStart, count = math.min(COUNT_CEILING, count + permits) }
    end
    if state ~= nil and a - state.windowStart < p.window then
      return state
    end
    return { windowStart = openingAt(a, p), count = math.min(COUNT_CEILING, permits) }
  end

  -- From then on absorb drops permits admitted at admittedAt; past 2^53 by up to a window (sluice.time_plus).
  function M.absorbableUntil(admittedAt, p)
    return S.time_plus(openingAt(admittedAt, p), p.window)
  end

  -- Settling a ticket: FixedWindowAlgorithm's Settleable (mark, settle), whose comment derives it. The mark is
  -- the window start charged; a refund lowers that window's count while it is current; an extra charge goes
  -- to the window current at now.
  function M.mark(admitted, now, p)
    return admitted.windowStart
  end

  function M.settle(state, now, mark, estimate, actual, p)
    local t = clock(state, now)
    local count = countAt(state, t, p)
    if actual > estimate then
      local start
      if count > 0 then
        start = state.windowStart
      else
        start = openingAt(t, p)
      end
      return { windowStart = start, count = math.min(COUNT_CEILING, count + (actual - estimate)) }
    end
    if actual == estimate or count == 0 or state.windowStart ~= mark then
      return state
    end
    local left = count - (estimate - actual)
    if left <= 0 then
      return nil
    end
    return { windowStart = mark, count = left }
  end

  ALG["fixed_window"] = M
end
