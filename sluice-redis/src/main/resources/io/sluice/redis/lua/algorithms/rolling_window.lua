-- algorithms/rolling_window.lua: line-by-line port of io.sluice.internal.algorithm.RollingWindowAlgorithm.
-- The model (Istio mixer's redisquota rolling window in integer microseconds), the invariants and the worked
-- example are in the Java class's essay; this file only ports it. Module shape: docs/redis-script-protocol.md.
--
-- Parameters (RollingWindow's record components after the name): limit, window (micros), bucket (micros).
-- State (RollingWindowAlgorithm.State): buckets, the flat list start, count, start, count, ... oldest first (Lua
-- indices: buckets[i] a start and buckets[i + 1] its count, for odd i).
--
-- Storage: the default one, although a write rewrites the whole list (at most window/bucket + 1 <= 10001
-- buckets): every decision reads and sums all live buckets anyway, and re-encoding the list costs less than
-- reading a sorted set whole (see algorithms/sliding_log.lua for the measurement).
--
-- Arithmetic: starts are at most 2^53 and counts (and their sum) at most Limit.MAX_COUNT, so all exact; the
-- Java sums start + window are written window - (t - start), which is exact, except in expiresAt.
do
  local S = sluice
  local M = {}

  M.fields = { { "buckets", "ints" } }

  function M.parse(w)
    return { limit = S.arg_int(w[1]), window = S.arg_int(w[2]), bucket = S.arg_int(w[3]) }
  end

  -- Shared by every caller: never written to.
  local EMPTY = {}

  local function newest(buckets)
    return buckets[#buckets - 1]
  end

  local function total(buckets)
    local sum = 0
    for i = 2, #buckets, 2 do
      sum = sum + buckets[i]
    end
    return sum
  end

  -- Lua only (Java's Arrays.copyOfRange).
  -- buckets[from..], a new list (Java's Arrays.copyOfRange).
  local function copyFrom(buckets, from)
    local out = {}
    for i = from, #buckets do
      out[#out + 1] = buckets[i]
    end
    return out
  end

  -- A now before the newest bucket counts as no time passed.
  local function clock(state, now)
    if state == nil or #state.buckets == 0 then
      return now
    end
    return math.max(now, newest(state.buckets))
  end

  -- The buckets with start > t - window.
  local function live(state, t, window)
    if state == nil then
      return EMPTY
    end
    local buckets = state.buckets
    local first = 1
    while first <= #buckets and buckets[first] <= t - window do
      first = first + 2
    end
    if first == 1 then
      return buckets
    end
    return copyFrom(buckets, first)
  end

  -- Waits for the oldest buckets to expire until permits fit.
  local function retryAfter(buckets, t, used, permits, p)
    local excess = used + permits - p.limit
    local i = 1
    while buckets[i + 1] < excess do
      excess = excess - buckets[i + 1]
      i = i + 2
    end
    return p.window - (t - buckets[i])
  end

  -- The live buckets with permits added to the open one, or to a new one opened at t.
  local function charged(buckets, t, permits, p)
    local n = #buckets
    local out = copyFrom(buckets, 1)
    if n > 0 and t - buckets[n - 1] < p.bucket then
      out[n] = out[n] + permits
    else
      out[n + 1] = t
      out[n + 2] = permits
    end
    return out
  end

  local function resetAfter(buckets, t, p)
    if #buckets == 0 then
      return 0
    end
    return p.window - (t - newest(buckets))
  end

  local function remaining(used, p)
    return math.max(0, p.limit - used)
  end

  function M.step(state, now, permits, maxWaitMicros, p)
    local t = clock(state, now)
    local buckets = live(state, t, p.window)
    local used = total(buckets)
    if permits == 0 or used + permits <= p.limit then
      local admitted = state
      local after = buckets
      if permits ~= 0 then
        admitted = { buckets = charged(buckets, t, permits, p) }
        after = admitted.buckets
      end
      return S.allow(0, remaining(used + permits, p), resetAfter(after, t, p), admitted, state)
    end
    return S.reject(remaining(used, p), retryAfter(buckets, t, used, permits, p), resetAfter(buckets, t, p), state)
  end

  -- Istio's best effort: what is left of the limit, at most permits.
  function M.grantable(state, now, permits, p)
    local used = total(live(state, clock(state, now), p.window))
    return math.max(0, math.min(permits, p.limit - used))
  end

  -- Passes 2^53 by up to a window when the newest bucket is near MAX_TIME: see sluice.time_plus.
  function M.expiresAt(state, p)
    return S.time_plus(newest(state.buckets), p.window)
  end

  -- Keeps the buckets still live under the previous window; the new window and bucket apply from now on.
  function M.migrate(state, previous, now, p)
    if state == nil then
      return nil
    end
    local buckets = live(state, clock(state, now), previous.window)
    if #buckets == 0 then
      return nil
    end
    return { buckets = buckets }
  end

  -- Settling a ticket: RollingWindowAlgorithm's Settleable (mark, settle). The mark is the start of the
  -- bucket charged: a refund lowers it while it is live; an extra charge goes into the open bucket at now.
  function M.mark(admitted, now, p)
    return newest(admitted.buckets)
  end

  function M.settle(state, now, mark, estimate, actual, p)
    local t = clock(state, now)
    local buckets = live(state, t, p.window)
    if actual > estimate then
      return { buckets = charged(buckets, t, actual - estimate, p) }
    end
    if actual < estimate then
      for i = 1, #buckets, 2 do
        if buckets[i] == mark then
          local left = buckets[i + 1] - (estimate - actual)
          local after = {}
          for j = 1, #buckets, 2 do
            if j ~= i then
              after[#after + 1] = buckets[j]
              after[#after + 1] = buckets[j + 1]
            elseif left > 0 then
              after[#after + 1] = buckets[j]
              after[#after + 1] = left
            end
          end
          if #after == 0 then
            return nil
          end
          return { buckets = after }
        end
      end
    end
    return state
  end

  ALG["rolling_window"] = M
end
