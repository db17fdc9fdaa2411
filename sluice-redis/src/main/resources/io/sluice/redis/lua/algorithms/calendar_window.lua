-- algorithms/calendar_window.lua: line-by-line port of io.sluice.internal.algorithm.CalendarWindowAlgorithm.
-- The model, the invariants and the worked example are in the Java class's essay; this file only ports it.
-- Module shape: docs/redis-script-protocol.md.
--
-- Parameters (CalendarWindow's record components after the name): limit, period ("minute" ... "year"), zone
-- (e.g. "Europe/Berlin"), weekStartsOn ("monday" ... "sunday"); then, in calls (never in a previous version's
-- words), the boundaries the client computed around its clock (CalendarPeriods.around): three or four
-- increasing times in µs, the start of the previous window, the current window, the end of the next one.
-- Lua has no time zone data: the boundaries are how the server's clock finds its window.
-- State (CalendarWindowAlgorithm.State): windowEnd, count.
do
  local S = sluice

  local M = {}

  M.fields = { { "windowEnd", "int" }, { "count", "int" } }

  function M.parse(w)
    local boundaries = {}
    for i = 5, #w do
      boundaries[#boundaries + 1] = w[i]
    end
    return {
      limit = S.arg_int(w[1]),
      period = w[2],
      zone = w[3],
      weekStartsOn = w[4],
      boundaries = boundaries,
    }
  end

  -- Lua only (Java's CalendarPeriods.end reads zone rules Lua has not: the client sends the table).
  -- CalendarPeriods.end at the server's now, from the client's table: the b[i + 1] with b[i] <= now < b[i + 1].
  -- A now outside the table means the clocks differ by more than a window: refused, never guessed.
  local function windowEnd(now, p)
    local b = p.boundaries
    local previous = nil
    for i = 1, #b do
      local t = S.arg_int(b[i])
      if previous ~= nil and previous <= now and now < t then
        return t
      end
      previous = t
    end
    local first, last = "none", "none"
    if #b > 0 then
      first, last = b[1], b[#b]
    end
    error("calendar_window: the time " .. S.fmt_int(now) .. " is outside the windows the client sent, ["
      .. first .. ", " .. last .. ") µs: the client's clock and Redis's differ by more than one "
      .. p.period .. " window (" .. p.zone .. ")")
  end

  -- The count of the window containing now: the state's count while its window lasts, else 0.
  local function countAt(state, now)
    if state ~= nil and now < state.windowEnd then
      return state.count
    end
    return 0
  end

  local function remaining(charged, p)
    return math.max(0, p.limit - charged)
  end

  function M.step(state, now, permits, maxWaitMicros, p)
    local count = countAt(state, now)
    if permits == 0 then
      local reset = 0
      if count > 0 then
        reset = state.windowEnd - now
      end
      return S.allow(0, remaining(count, p), reset, state, state)
    end
    if count + permits <= p.limit then
      local e
      if count > 0 then
        e = state.windowEnd
      else
        e = windowEnd(now, p)
      end
      local after = count + permits
      return S.allow(0, remaining(after, p), e - now, { windowEnd = e, count = after }, state)
    end
    if count == 0 then
      -- More than the limit in one request: no window ever admits it.
      return S.reject(remaining(0, p), math.huge, 0, state)
    end
    local untilEnd = state.windowEnd - now
    return S.reject(remaining(count, p), untilEnd, untilEnd, state)
  end

  function M.grantable(state, now, permits, p)
    return math.max(0, math.min(permits, p.limit - countAt(state, now)))
  end

  -- At most CalendarPeriods.END = 2^53 + 2, exact in a double.
  function M.expiresAt(state, p)
    return state.windowEnd
  end

  -- Keeps the count when only the limit changed; another period, zone or first day of the week restarts.
  function M.migrate(state, previous, now, p)
    if previous.period == p.period and previous.zone == p.zone
        and (p.period ~= "week" or previous.weekStartsOn == p.weekStartsOn) then
      return state
    end
    return nil
  end

  -- Settling a ticket: CalendarWindowAlgorithm's Settleable (mark, settle). The mark is the window end charged.
  local MAX_COUNT = 1000000000000

  function M.mark(admitted, now, p)
    return admitted.windowEnd
  end

  function M.settle(state, now, mark, estimate, actual, p)
    local count = countAt(state, now)
    if actual > estimate then
      local e
      if count > 0 then
        e = state.windowEnd
      else
        e = windowEnd(now, p)
      end
      return { windowEnd = e, count = math.min(MAX_COUNT, count + (actual - estimate)) }
    end
    if actual == estimate or count == 0 or state.windowEnd ~= mark then
      return state
    end
    local left = count - (estimate - actual)
    if left <= 0 then
      return nil
    end
    return { windowEnd = mark, count = left }
  end

  ALG["calendar_window"] = M
end
