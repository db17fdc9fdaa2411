-- algorithms/smooth_bursty.lua: line-by-line port of io.sluice.internal.algorithm.SmoothAlgorithm (the part
-- shared with smooth_warming_up) and SmoothBurstyAlgorithm. The model, the invariants and the worked examples
-- are in the Java classes' essays; this file only ports them. Module shape: docs/redis-script-protocol.md.
--
-- SmoothAlgorithm lives here as sluice.smooth.module, because a port is one file per algorithm and
-- smooth_bursty.lua is appended before smooth_warming_up.lua (SluiceScript.ALGORITHMS), which builds its
-- module with it.
--
-- Doubles. Guava's limiters compute with doubles; a Lua number is the same IEEE double, so every double
-- expression below is Java's, operand for operand and in Java's order, and gives the same bits (no fused
-- multiply-add: each Lua operator rounds its result, as Java does). Java's long values are integers here;
-- the conversions between the two are exact while they stay below 2^53, which every time and duration does.
--
-- Parameters (SmoothBursty's record components after the name): permitsPerSecond (double), maxBurstSeconds
-- (double). State (SmoothAlgorithm.State): storedPermits (double), nextFreeTicketMicros.
do
  local S = sluice

  local MAX_TIME = 9007199254740992 -- Arith.MAX_TIME = 2^53
  local TWO_63 = 9223372036854775808
  local NEVER = math.huge           -- Arith.NEVER (Long.MAX_VALUE)

  --- Java's (long) cast of a double: NaN gives 0, values beyond the long range saturate, the rest truncate
  --- toward zero. The saturated Long.MAX_VALUE is math.huge (see lib/arith_sat.lua).
  local function truncate(micros)
    if micros ~= micros then
      return 0
    end
    if micros >= TWO_63 then
      return math.huge
    end
    if micros <= -TWO_63 then
      return -math.huge
    end
    if micros < 0 then
      return math.ceil(micros)
    end
    return math.floor(micros)
  end

  -- Arith.addSat. A wait of 2^53 or more is not exact in a double, but it is only ever clamped to MAX_TIME
  -- (reserve), which gives Java's answer: add_sat never rounds a larger sum down to 2^53.
  local addSat = S.add_sat

  --- Guava's SECONDS.toMicros(1L) / permitsPerSecond (SmoothAlgorithm.stableIntervalMicros).
  local function stableIntervalMicros(permitsPerSecond)
    return 1000000 / permitsPerSecond
  end

  -- Lua only (SmoothAlgorithm's shared code, which smooth_warming_up builds on).
  --- The shared SmoothAlgorithm. C is the cost curve, the Java subclass's overrides, each taking the parsed
  --- parameters p last (Java's this): storedPermitsToWaitTime(storedPermits, permitsToTake, p),
  --- coolDownIntervalMicros(p), initialStoredPermits(p), and sameLimit(p, q) (the record equality migrate
  --- tests). p carries SmoothAlgorithm's fields stableIntervalMicros and maxPermits, computed by the
  --- module's parse exactly as the Java constructor computes them.
  local function smooth(C)
    local M = {}

    M.fields = { { "storedPermits", "num" }, { "nextFreeTicketMicros", "int" } }

    -- Lua only (Java's State record's constructor).
    local function state(storedPermits, nextFreeTicketMicros)
      return { storedPermits = storedPermits, nextFreeTicketMicros = nextFreeTicketMicros }
    end

    -- SmoothAlgorithm.absent: no state is a key idle long enough to be full (maxPermits stored, ticket now).
    local function absent(now, p)
      return state(p.maxPermits, now)
    end

    -- Guava's resync: idle time since the ticket becomes stored permits, and the ticket moves to now.
    -- (now - ticket is exact: both are integers up to 2^53.)
    local function resync(s, now, p)
      local ticket = s.nextFreeTicketMicros
      if now <= ticket then
        return s
      end
      local newPermits = (now - ticket) / C.coolDownIntervalMicros(p)
      return state(math.min(p.maxPermits, s.storedPermits + newPermits), now)
    end

    -- Guava's reserveEarliestAvailable after resync: stored permits first, then fresh ones.
    local function reserve(synced, permits, p)
      local required = permits
      local stored = synced.storedPermits
      local storedToSpend = math.min(required, stored)
      local freshPermits = required - storedToSpend
      local waitMicros = addSat(C.storedPermitsToWaitTime(stored, storedToSpend, p),
        truncate(freshPermits * p.stableIntervalMicros))
      local ticket = math.min(addSat(synced.nextFreeTicketMicros, waitMicros), MAX_TIME)
      return state(stored - storedToSpend, ticket)
    end

    -- Whether resync after idleMicros (>= 1) reaches maxPermits: resync's own expression.
    local function fillsAfter(stored, idleMicros, p)
      return stored + idleMicros / C.coolDownIntervalMicros(p) >= p.maxPermits
    end

    -- The first time at which resync leaves exactly maxPermits stored (see the Java essay), returned as the
    -- ticket and the idle time after it (Java returns their sum): the sum can pass 2^53 when the ticket
    -- saturated at MAX_TIME, and the two callers need differences that stay exact. NEVER alone when the key
    -- never fills within the clock domain.
    -- ticket + idle, or NEVER past the end of the clock (SmoothAlgorithm.afterTicket): compared as a difference
    -- because the sum is not exact above 2^53.
    local function afterTicket(ticket, idle)
      if idle > MAX_TIME - ticket then
        return NEVER
      end
      return ticket, idle
    end

    local function fullAt(s, p)
      local stored = s.storedPermits
      local ticket = s.nextFreeTicketMicros
      if stored == p.maxPermits then
        return ticket, 0
      end
      if stored > p.maxPermits then -- a few ulps above after a rescale: one idle microsecond clamps it
        return afterTicket(ticket, 1)
      end
      local estimate = (p.maxPermits - stored) * C.coolDownIntervalMicros(p)
      if not (estimate <= MAX_TIME) then -- also NaN and infinity
        return NEVER
      end
      local idle = math.max(1, math.ceil(estimate))
      while idle > 1 and fillsAfter(stored, idle - 1, p) do
        idle = idle - 1
      end
      while not fillsAfter(stored, idle, p) do
        idle = idle + 1
      end
      return afterTicket(ticket, idle)
    end

    -- Saved permits usable at now, or 0 while the ticket is in the future.
    local function remaining(committed, now, p)
      local synced = resync(committed, now, p)
      if synced.nextFreeTicketMicros <= now then
        return math.floor(synced.storedPermits)
      end
      return 0
    end

    -- max(0, fullAt - now), as (ticket - now) + idle: exact whenever the answer is below 2^53, which it is
    -- from 1971 on (idle is at most the 366-day fill time); only a ticket saturated at MAX_TIME and an
    -- earlier now give more, rounded to an even neighbour.
    local function resetAfter(committed, now, p)
      local ticket, idle = fullAt(committed, p)
      if ticket == NEVER then
        return NEVER
      end
      return math.max(0, (ticket - now) + idle)
    end

    function M.step(s, now, permits, maxWaitMicros, p)
      local current = s
      if current == nil then
        current = absent(now, p)
      end
      if permits == 0 then
        return S.allow(0, remaining(current, now, p), resetAfter(current, now, p), s, s)
      end
      local ticket = current.nextFreeTicketMicros
      if ticket - maxWaitMicros > now then -- Guava's canAcquire(now, timeout) is false
        return S.reject(0, ticket - now, resetAfter(current, now, p), s)
      end
      local synced = resync(current, now, p)
      local reserved = reserve(synced, permits, p)
      local waitMicros = math.max(synced.nextFreeTicketMicros - now, 0)
      return S.allow(waitMicros, remaining(reserved, now, p), resetAfter(reserved, now, p), reserved, s)
    end

    function M.grantable(s, now, permits, p)
      local current = s
      if current == nil then
        current = absent(now, p)
      end
      if current.nextFreeTicketMicros <= now then
        return permits
      end
      return 0
    end

    -- fullAt. Past the end of the clock (a ticket saturated at MAX_TIME) every expiry means the same, "not
    -- before MAX_TIME", and the sum is not exact in a double (2^53 + 1 would even round down to MAX_TIME, which
    -- the dispatcher would take as expired at now = MAX_TIME): the answer is then MAX_TIME + 2, which keeps
    -- the dispatcher's TTL arithmetic exact too.
    function M.expiresAt(s, p)
      local ticket, idle = fullAt(s, p)
      if ticket == NEVER then
        return NEVER
      end
      if idle > MAX_TIME - ticket then
        return MAX_TIME + 2
      end
      return ticket + idle
    end

    -- Guava's setRate at now: resync at the previous parameters, then scale the stored permits by
    -- maxPermits / previous maxPermits (in Guava's order); the ticket is kept.
    function M.migrate(s, previous, now, p)
      if s == nil or C.sameLimit(previous, p) then
        return s
      end
      local synced = resync(s, now, previous)
      local stored
      if previous.maxPermits == 0.0 then
        stored = C.initialStoredPermits(p)
      else
        stored = synced.storedPermits * p.maxPermits / previous.maxPermits
      end
      return state(stored, synced.nextFreeTicketMicros)
    end

    return M
  end

  -- For smooth_warming_up.lua: SmoothAlgorithm and the static helpers its subclass uses.
  S.smooth = { module = smooth, truncate = truncate, addSat = addSat, stableIntervalMicros = stableIntervalMicros }

  -- SmoothBurstyAlgorithm: saved permits are free; an idle key refills at the stable rate.
  local M = smooth({
    storedPermitsToWaitTime = function(storedPermits, permitsToTake, p)
      return 0
    end,
    coolDownIntervalMicros = function(p)
      return p.stableIntervalMicros
    end,
    initialStoredPermits = function(p)
      return 0.0
    end,
    sameLimit = function(p, q)
      return p.permitsPerSecond == q.permitsPerSecond and p.maxBurstSeconds == q.maxBurstSeconds
    end,
  })

  -- The constructor's derived values: Guava's expressions, in Guava's order.
  function M.parse(w)
    local permitsPerSecond = S.arg_num(w[1])
    local maxBurstSeconds = S.arg_num(w[2])
    return {
      permitsPerSecond = permitsPerSecond,
      maxBurstSeconds = maxBurstSeconds,
      stableIntervalMicros = stableIntervalMicros(permitsPerSecond),
      maxPermits = maxBurstSeconds * permitsPerSecond,
    }
  end

  ALG["smooth_bursty"] = M
end
