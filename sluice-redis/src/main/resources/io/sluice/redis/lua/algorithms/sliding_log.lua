-- algorithms/sliding_log.lua: line-by-line port of io.sluice.internal.algorithm.SlidingLogAlgorithm.
-- The model, the invariants and the worked example are in the Java class's essay; this file only ports it.
-- Module shape: docs/redis-script-protocol.md.
--
-- Parameters (SlidingLog's record components after the name): limit, window (micros), minGap (micros),
-- countRejected ("1" | "0").
-- State (SlidingLogAlgorithm.State): log, the flat list time, permits, time, permits, ... oldest first (Lua
-- indices: log[i] a time and log[i + 1] its permits, for odd i).
--
-- Storage: the default one, although a write rewrites the whole log. Every decision reads and sums the whole
-- log anyway (so does the Java transition, and ClassDojo's script reads its whole sorted set), so a sorted set
-- would only save re-encoding the list: measured in Redis 7.0 with 10^5 entries, reading, encoding and writing
-- the list took 150 ms, reading a sorted set whole and updating one member 220 ms, in 6 times the memory.
--
-- Arithmetic: times and window are at most 2^53 and counts at most 2 * 10^6, so every value is exact; the
-- sums time + window of the Java code are written window - (t - time), which is exact, except in expiresAt.
do
  local S = sluice
  local M = {}

  M.fields = { { "log", "ints" } }

  function M.parse(w)
    return {
      limit = S.arg_int(w[1]),
      window = S.arg_int(w[2]),
      minGap = S.arg_int(w[3]),
      countRejected = S.arg_bool(w[4]),
    }
  end

  -- Shared by every caller: never written to.
  local EMPTY = {}

  local function newest(log)
    return log[#log - 1]
  end

  local function total(log)
    local sum = 0
    for i = 2, #log, 2 do
      sum = sum + log[i]
    end
    return sum
  end

  -- log[from..], a new list (Java's Arrays.copyOfRange).
  local function copyFrom(log, from)
    local out = {}
    for i = from, #log do
      out[#out + 1] = log[i]
    end
    return out
  end

  -- A now before the newest entry counts as no time passed.
  local function clock(state, now)
    if state == nil or #state.log == 0 then
      return now
    end
    return math.max(now, newest(state.log))
  end

  -- The entries in (t - window, t]; t is never before the newest entry.
  local function inWindow(state, t, window)
    if state == nil then
      return EMPTY
    end
    local log = state.log
    local first = 1
    while first <= #log and log[first] <= t - window do
      first = first + 2
    end
    if first == 1 then
      return log
    end
    return copyFrom(log, first)
  end

  -- The log with permits more at t, merged into the newest entry when it is at t too.
  local function appended(log, t, permits)
    local n = #log
    local out = copyFrom(log, 1)
    if n > 0 and log[n - 1] == t then
      out[n] = out[n] + permits
    else
      out[n + 1] = t
      out[n + 2] = permits
    end
    return out
  end

  -- Drops the oldest permits beyond the newest limit; see the essay for why that is invisible.
  local function capped(log, p)
    local excess = total(log) - p.limit
    if excess <= 0 then
      return log
    end
    local i = 1
    while log[i + 1] <= excess do
      excess = excess - log[i + 1]
      i = i + 2
    end
    local kept = copyFrom(log, i)
    kept[2] = kept[2] - excess
    return kept
  end

  local function gapOver(log, t, p)
    return p.minGap == 0 or #log == 0 or t - newest(log) >= p.minGap
  end

  local function resetAfter(log, t, p)
    if #log == 0 then
      return 0
    end
    return p.window - (t - newest(log))
  end

  local function remaining(counted, p)
    return math.max(0, p.limit - counted)
  end

  -- The smallest wait after which permits pass against log if nothing else happens.
  local function retryAfter(log, t, permits, p)
    local wait = 0
    local excess = total(log) + permits - p.limit
    local seen = 0
    local i = 1
    while i <= #log and excess > 0 do
      seen = seen + log[i + 1]
      if seen >= excess then
        wait = p.window - (t - log[i])
        break
      end
      i = i + 2
    end
    if p.minGap > 0 and #log > 0 then
      wait = math.max(wait, p.minGap - (t - newest(log)))
    end
    return wait
  end

  function M.step(state, now, permits, maxWaitMicros, p)
    local t = clock(state, now)
    local log = inWindow(state, t, p.window)
    local count = total(log)
    local recorded = state
    if permits ~= 0 then
      recorded = { log = capped(appended(log, t, permits), p) }
    end
    local rejected = state
    if p.countRejected then
      rejected = recorded
    end
    if permits == 0 or (count + permits <= p.limit and gapOver(log, t, p)) then
      local after = log
      if permits ~= 0 then
        after = recorded.log
      end
      return S.allow(0, remaining(total(after), p), resetAfter(after, t, p), recorded, rejected)
    end
    local left = log
    if rejected ~= state then
      left = rejected.log
    end
    return S.reject(remaining(total(left), p), retryAfter(left, t, permits, p), resetAfter(left, t, p), rejected)
  end

  function M.grantable(state, now, permits, p)
    local t = clock(state, now)
    local log = inWindow(state, t, p.window)
    if not gapOver(log, t, p) then
      return 0
    end
    return math.max(0, math.min(permits, p.limit - total(log)))
  end

  -- Passes 2^53 by up to a window when the newest entry is near MAX_TIME: see sluice.time_plus.
  function M.expiresAt(state, p)
    return S.time_plus(newest(state.log), p.window)
  end

  -- Keeps the log, minus what had already left the previous window at now.
  function M.migrate(state, previous, now, p)
    if state == nil then
      return nil
    end
    local log = inWindow(state, clock(state, now), previous.window)
    if #log == 0 then
      return nil
    end
    return { log = log }
  end

  ALG["sliding_log"] = M
end
