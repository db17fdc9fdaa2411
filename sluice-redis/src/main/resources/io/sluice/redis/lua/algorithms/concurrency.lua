-- algorithms/concurrency.lua: line-by-line port of io.sluice.internal.algorithm.ConcurrencyAlgorithm.
-- The model (Stripe's concurrent requests limiter with expiring leases), the lease ids and the worked example
-- are in the Java class's essay; this file only ports it. Module shape: docs/redis-script-protocol.md.
--
-- Parameters (Concurrency's record components after the name): maxConcurrent, leaseTtl (micros).
-- State (ConcurrencyAlgorithm.State): lastId, and leases, the flat list of triples id, permits, expiry in grant
-- order (Lua indices: leases[i], leases[i + 1], leases[i + 2] for i = 1, 4, 7, ...).
--
-- One difference in representation: a lease's expiry is kept as expiresAt - 2^53 (MAX_TIME), not expiresAt.
-- A lease granted within one TTL of MAX_TIME expires after 2^53, where a double holds only even integers, so
-- now + ttl would round; expiresAt - 2^53 = (now - 2^53) + ttl is exact for every lease (it lies in
-- [-2^53, 366 days]), and so is every comparison and duration below: expiresAt > now is
-- expiry > now - 2^53, and expiresAt - now is expiry - (now - 2^53). Only M.expiresAt, for the store, turns it
-- back into a time (sluice.time_plus). Ids stay below 2^53 (the Java essay says why), so lastId + 1 is exact.
--
-- Storage: the default one, although a write rewrites every lease: every decision reads and sums them all
-- anyway (see algorithms/sliding_log.lua for why a sorted set would not be faster).
do
  local S = sluice
  local M = {}

  local LEASE = 3
  local MAX_TIME = 9007199254740992
  -- The largest lease id: see the Java essay, "Ids stay below 2^53".
  local LAST_ID = MAX_TIME - 1

  M.fields = { { "lastId", "int" }, { "leases", "ints" } }

  function M.parse(w)
    return { maxConcurrent = S.arg_int(w[1]), ttl = S.arg_int(w[2]) }
  end

  -- Shared by every caller: never written to.
  local EMPTY = {}

  local function total(leases)
    local sum = 0
    for i = 2, #leases, LEASE do
      sum = sum + leases[i]
    end
    return sum
  end

  local function remaining(inFlight, p)
    return math.max(0, p.maxConcurrent - inFlight)
  end

  -- What a request could take now: nothing once the ids are used up.
  local function available(inFlight, nextId, p)
    if nextId > LAST_ID then
      return 0
    end
    return remaining(inFlight, p)
  end

  -- The id the next lease would get: at least now, above every id of the state.
  local function nextId(state, now)
    if state == nil then
      return now
    end
    return math.max(state.lastId + 1, now)
  end

  -- Time from now until the last lease expires (0 when none is left after now).
  local function resetAfter(leases, now)
    local latest = now - MAX_TIME
    for i = 3, #leases, LEASE do
      latest = math.max(latest, leases[i])
    end
    return latest - (now - MAX_TIME)
  end

  -- The leases with expiresAt > now.
  local function live(state, now)
    if state == nil then
      return EMPTY
    end
    local leases = state.leases
    local kept = {}
    for i = 1, #leases, LEASE do
      if leases[i + 2] > now - MAX_TIME then
        kept[#kept + 1] = leases[i]
        kept[#kept + 1] = leases[i + 1]
        kept[#kept + 1] = leases[i + 2]
      end
    end
    if #kept == #leases then
      return leases
    end
    return kept
  end

  local function indexOf(leases, id)
    for i = 1, #leases, LEASE do
      if leases[i] == id then
        return i
      end
    end
    return -1
  end

  -- Lets leases go, earliest expiry first, until permits fit; waits for the last one let go, unless that is
  -- too late to get an id. Lua's sort is not stable as Java's is, but among leases expiring together the
  -- order cannot change the answer: the wait is the expiry of the group in which the running sum reaches excess.
  local function retryAfter(leases, now, inFlight, permits, p)
    local byExpiry = {}
    for i = 1, #leases, LEASE do
      byExpiry[#byExpiry + 1] = { leases[i + 2], leases[i + 1] }
    end
    table.sort(byExpiry, function(a, b)
      return a[1] < b[1]
    end)
    local excess = inFlight + permits - p.maxConcurrent
    local i = 1
    while byExpiry[i][2] < excess do
      excess = excess - byExpiry[i][2]
      i = i + 1
    end
    local wait = byExpiry[i][1] - (now - MAX_TIME)
    -- From MAX_TIME on no id is left (the state's ids are below it: this step found one).
    if wait > LAST_ID - now then
      return S.FOREVER
    end
    return wait
  end

  function M.step(state, now, permits, maxWaitMicros, p)
    local leases = live(state, now)
    local inFlight = total(leases)
    local id = nextId(state, now)
    if permits == 0 then
      return S.allow(0, available(inFlight, id, p), resetAfter(leases, now), state, state)
    end
    if id > LAST_ID then
      -- Out of ids for good: time cannot pass MAX_TIME, so no wait helps.
      return S.reject(0, S.FOREVER, resetAfter(leases, now), state)
    end
    if inFlight + permits > p.maxConcurrent then
      return S.reject(remaining(inFlight, p), retryAfter(leases, now, inFlight, permits, p),
        resetAfter(leases, now), state)
    end
    local granted = {}
    for i = 1, #leases do
      granted[i] = leases[i]
    end
    granted[#leases + 1] = id
    granted[#leases + 2] = permits
    granted[#leases + 3] = (now - MAX_TIME) + p.ttl
    local verdict = S.allow(0, remaining(inFlight + permits, p), resetAfter(granted, now),
      { lastId = id, leases = granted }, state)
    verdict.lease = id
    return verdict
  end

  function M.grantable(state, now, permits, p)
    local inFlight = total(live(state, now))
    return math.min(permits, available(inFlight, nextId(state, now), p))
  end

  -- max(lastId + 1, the latest expiry): past 2^53 while a lease granted near MAX_TIME lasts (sluice.time_plus).
  function M.expiresAt(state, p)
    local latest = state.lastId + 1
    for i = 3, #state.leases, LEASE do
      latest = math.max(latest, S.time_plus(MAX_TIME, state.leases[i]))
    end
    return latest
  end

  -- Keeps the leases in flight; a new maximum judges them at once, a new TTL applies to new leases.
  function M.migrate(state, previous, now, p)
    return state
  end

  function M.release(state, now, lease, p)
    local leases = live(state, now)
    local at = indexOf(leases, lease)
    if at < 0 then
      return { released = false, state = state }
    end
    local kept = {}
    for i = 1, #leases do
      if i < at or i >= at + LEASE then
        kept[#kept + 1] = leases[i]
      end
    end
    local after = { lastId = state.lastId, leases = kept }
    if M.expiresAt(after, p) <= now then
      after = nil
    end
    return { released = true, state = after }
  end

  ALG["concurrency"] = M
end
