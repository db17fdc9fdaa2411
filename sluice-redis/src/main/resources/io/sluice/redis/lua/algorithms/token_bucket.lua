-- algorithms/token_bucket.lua: line-by-line port of io.sluice.internal.algorithm.TokenBucketAlgorithm.
-- The model (Bucket4j's bandwidth), the invariants and the worked example are in the Java class's essay; this
-- file only ports it. Module shape: docs/redis-script-protocol.md.
--
-- Parameters (TokenBucket's record components after the name): capacity, refillTokens, refillPeriod (micros),
-- refill ("greedy" | "interval" | "interval_aligned"), initialTokens.
-- State (TokenBucketAlgorithm.State): tokens (negative after reservations), lastRefill, roundingError, and the
-- refund clock `refunded` (µs), stored as a fourth field only when positive: a key never refunded into keeps the
-- three-field value earlier versions wrote and read (M.load reads both, M.fields_of says which to write); nil
-- means 0.
--
-- Numbers. The Java keeps every intermediate within 2^53 in magnitude (capacity - tokens <= 2^53, a*b <= 2^53,
-- the greedy refill split into whole b-periods and a rest), with three exceptions, each written here as a
-- comparison of exact differences instead of a rounded sum:
--   - q*b + restMicros in greedyMicros (up to 2^53 + b);
--   - capacity - (tokens - permits) in step's deficit bound (up to 2^53 + capacity);
--   - added in refillGreedy (up to missing + a), only ever compared with missing: a sum at or above missing
--     rounds to at least missing, and one below it is below 2^53, so exact.
-- Java's integer division and remainder meet only non-negative operands here: S.floor_div and % are exact.
do
  local S = sluice

  -- Arith.MAX_TIME; also TokenBucketAlgorithm.MAX_DEFICIT, the most tokens the bucket may be below full.
  local MAX_TIME = 9007199254740992
  local MAX_DEFICIT = MAX_TIME
  local NEVER = S.FOREVER

  local M = {}

  M.fields = { { "tokens", "int" }, { "lastRefill", "int" }, { "roundingError", "int" } }
  local REFUNDED_FIELDS = { { "tokens", "int" }, { "lastRefill", "int" }, { "roundingError", "int" },
                            { "refunded", "int" } }

  -- Ticket.MAX_LIFETIME, µs (GcraAlgorithm.MAX_TICKET_LIFETIME).
  local MAX_TICKET_LIFETIME = 86400000000

  -- Lua only (storage): the fields a state is written with, three unless it has been refunded into.
  function M.fields_of(st)
    if st.refunded ~= nil and st.refunded > 0 then
      return REFUNDED_FIELDS
    end
    return M.fields
  end

  -- Lua only (storage): a stored value of three fields (never refunded into) or four.
  function M.load(key, p)
    local value, exists = S.get_value(key)
    if value == nil then
      return nil, nil, exists
    end
    local st, fingerprint = S.decode_state(value, M.fields)
    if st == nil then
      st, fingerprint = S.decode_state(value, REFUNDED_FIELDS)
    end
    return st, fingerprint, true
  end

  local function gcd(x, y)
    while y ~= 0 do
      x, y = y, x % y
    end
    return x
  end

  -- The constructor: the reduced refill rate a/b (a tokens per b micros).
  function M.parse(w)
    local p = {
      capacity = S.arg_int(w[1]),
      refillTokens = S.arg_int(w[2]),
      period = S.arg_int(w[3]),
      style = w[4],
      initialTokens = S.arg_int(w[5]),
    }
    if p.style ~= "greedy" and p.style ~= "interval" and p.style ~= "interval_aligned" then
      error("sluice: token_bucket refill must be greedy, interval or interval_aligned, got '" .. tostring(w[4]) .. "'")
    end
    local g = gcd(p.refillTokens, p.period)
    p.a = p.refillTokens / g
    p.b = p.period / g
    return p
  end

  -- Lua only (Java's State record's constructor; refunded nil for 0).
  local function state(tokens, lastRefill, roundingError, refunded)
    return { tokens = tokens, lastRefill = lastRefill, roundingError = roundingError, refunded = refunded }
  end

  -- A full bucket; INTERVAL forgets its phase (see the essay), INTERVAL_ALIGNED keeps the epoch grid.
  local function full(at, periodStart, p)
    if p.style == "interval_aligned" then
      return state(p.capacity, periodStart, 0)
    end
    return state(p.capacity, at, 0)
  end

  local function refillGreedy(s, at, elapsed, missing, p)
    local wholePeriods = S.floor_div(elapsed, p.b)
    if wholePeriods >= S.ceil_div(missing, p.a) then
      return full(at, at, p)
    end
    local fromRest = p.a * (elapsed % p.b)                       -- < a*b <= 2^53
    local carried = fromRest % p.b + s.roundingError             -- < 2b
    -- wholePeriods*a < missing; the sum passes 2^53 only when it passes missing (see the header).
    local added = wholePeriods * p.a + S.floor_div(fromRest, p.b) + S.floor_div(carried, p.b)
    if added >= missing then
      return full(at, at, p)
    end
    return state(s.tokens + added, at, carried % p.b)
  end

  local function refillInterval(s, at, elapsed, missing, p)
    local periods = S.floor_div(elapsed, p.period)
    local periodStart = s.lastRefill + periods * p.period
    if periods >= S.ceil_div(missing, p.refillTokens) then
      return full(at, periodStart, p)
    end
    return state(s.tokens + periods * p.refillTokens, periodStart, 0)
  end

  -- Bucket4j's refill up to at >= s.lastRefill.
  local function refill(s, at, p)
    local elapsed = at - s.lastRefill
    local missing = p.capacity - s.tokens
    if missing <= 0 then
      return full(at, s.lastRefill + S.floor_div(elapsed, p.period) * p.period, p)
    end
    if p.style == "greedy" then
      return refillGreedy(s, at, elapsed, missing, p)
    end
    return refillInterval(s, at, elapsed, missing, p)
  end

  local function fresh(now, p)
    local lastRefill = now
    if p.style == "interval_aligned" then
      lastRefill = now - now % p.period
    end
    return state(p.initialTokens, lastRefill, 0)
  end


  -- Smallest w with a*w + roundingError >= deficit*b, computed with products below 2^53; or NEVER.
  local function greedyMicros(deficit, roundingError, p)
    local q = S.floor_div(deficit, p.a)
    if q > S.floor_div(MAX_TIME, p.b) then
      return NEVER
    end
    local rest = (deficit % p.a) * p.b - roundingError           -- in (-b, a*b)
    local restMicros
    if rest >= 0 then
      restMicros = S.ceil_div(rest, p.a)
    else
      restMicros = -S.floor_div(-rest, p.a)
    end
    -- q*b <= 2^53 but q*b + restMicros may pass it by up to b and round. Beyond MAX_TIME, readyAt answers
    -- NEVER whatever lastRefill (>= 0) is, so answer it here, comparing exact differences.
    if q * p.b - MAX_TIME > -restMicros then
      return NEVER
    end
    return q * p.b + restMicros
  end

  -- From the start of the current period: ceil(deficit / R) period ends; or NEVER.
  local function intervalMicros(deficit, p)
    local periods = S.ceil_div(deficit, p.refillTokens)
    if periods > S.floor_div(MAX_TIME, p.period) then
      return NEVER
    end
    return periods * p.period
  end

  -- When the refilled bucket s holds target tokens, or NEVER past MAX_TIME.
  local function readyAt(s, target, p)
    local deficit = target - s.tokens
    if deficit <= 0 then
      return s.lastRefill
    end
    if target > p.capacity then
      return NEVER
    end
    local micros
    if p.style == "greedy" then
      micros = greedyMicros(deficit, s.roundingError, p)
    else
      micros = intervalMicros(deficit, p)
    end
    if micros == NEVER or micros > MAX_TIME - s.lastRefill then
      return NEVER
    end
    return s.lastRefill + micros
  end

  -- When s is full again: lastRefill if it is full.
  local function fullAt(s, p)
    return readyAt(s, p.capacity, p)
  end

  -- at - now, at least 0; NEVER for NEVER or longer than MAX_TIME.
  local function duration(at, now)
    if at == NEVER then
      return NEVER
    end
    -- math.max(0, at - now), written out (speed: a call into C costs about 800 instructions; this is the same
    -- value, 0 unless the difference is positive).
    local d = at - now
    if not (d > 0) then
      d = 0
    end
    if d > MAX_TIME then
      return NEVER
    end
    return d
  end

  local function resetAfter(s, now, p)
    if s.tokens >= p.capacity then
      return 0
    end
    return duration(fullAt(s, p), now)
  end

  -- Lua only (speed): M.expiresAt of st given fullTime = fullAt(st, p), so that step, which computes fullAt of
  -- the state it admits for resetAfter, hands the dispatcher that state's expiry without walking fullAt ->
  -- readyAt -> greedyMicros again in store_limit (LuaLibrariesIT checks the two agree).
  local function expiresAtFull(st, fullTime, p)
    if p.initialTokens < p.capacity then
      return NEVER
    end
    if fullTime > MAX_TIME then
      return NEVER
    end
    if st.refunded ~= nil then
      local extra = math.min(st.refunded, MAX_TICKET_LIFETIME)
      if fullTime > MAX_TIME - extra then
        return NEVER
      end
      return fullTime + extra
    end
    return fullTime
  end

  -- With initialTokens < capacity a full bucket admits more than a fresh key, so the state is kept (the Java
  -- essay's "Expiry"): NEVER. NEVER (math.huge) also when the bucket is full only after MAX_TIME;
  -- sluice.expire then keeps the key until MAX_TIME.
  -- A state refunded into lives min(refunded, MAX_TICKET_LIFETIME) longer (the Java's "Life of the clock").
  --
  -- Lua only (speed): the last answer for each limit version is kept, with the state it was for, when the helpers
  -- may keep what is a pure function of a call's arguments (sluice.keeps: a functions library). A hot key that
  -- rejects writes nothing, so its calls load the very same state table (decode_state keeps it) and check its expiry
  -- before the step (sluice.settle): the walk fullAt -> readyAt -> greedyMicros, about 8,000 instructions, once
  -- instead of on every call (per limit: a rule of three token buckets keeps three). Exact: no port writes to a state
  -- table or to parsed parameters (a changed state is a new table), so the same two tables always give the same
  -- answer. Bounded like sluice.params: past EXPIRY_MAX versions it starts again empty.
  -- (nil until then: with EVALSHA this module is built on every call, and two tables would cost it.)
  local EXPIRY_STATE, EXPIRY_AT, expiry_count, EXPIRY_MAX = nil, nil, 0, 256

  function M.expiresAt(st, p)
    if p.initialTokens < p.capacity then
      return NEVER
    end
    if EXPIRY_STATE ~= nil and EXPIRY_STATE[p] == st then
      return EXPIRY_AT[p]
    end
    local at = expiresAtFull(st, fullAt(st, p), p)
    if S.keeps then
      if EXPIRY_STATE == nil or (EXPIRY_STATE[p] == nil and expiry_count >= EXPIRY_MAX) then
        EXPIRY_STATE, EXPIRY_AT, expiry_count = {}, {}, 0
      end
      if EXPIRY_STATE[p] == nil then
        expiry_count = expiry_count + 1
      end
      EXPIRY_STATE[p], EXPIRY_AT[p] = st, at
    end
    return at
  end

  -- Lua only (speed): Step.allow of the admitted state `after`, with its resetAfter and, as the second value
  -- (lib/verdict.lua), its expiry from one fullAt (resetAfter is 0 for a full bucket, where fullAt is lastRefill).
  local function allowAfter(wait, remaining, after, now, rejected, p)
    local fullTime = fullAt(after, p)
    local reset = 0
    if after.tokens < p.capacity then
      reset = duration(fullTime, now)
    end
    return S.allow(wait, remaining, reset, after, rejected), expiresAtFull(after, fullTime, p)
  end

  -- The state refilled up to now; a now before lastRefill means no time passed; no state is a fresh bucket
  -- created at now. A state only expires when initialTokens == capacity, and then refilling it gives the
  -- fresh bucket exactly (the Java's refilled).
  --
  -- Lua only (speed): no state is answered without refilling the fresh bucket. The refill runs over no time but
  -- the aligned style's phase (now % period, less than a period), so it brings no token: it only caps
  -- initialTokens at capacity, as full() (a bucket at or above capacity), keeping fresh's lastRefill; below
  -- capacity the fresh bucket is the answer. One table instead of two or three on every new key (an admission on
  -- many keys: 3% to 5%); RedisMemoryEquivalenceIT and TokenBucketRedisIT decide new keys of every refill style
  -- and initial tokens as the Java does.
  local function refilled(st, now, p)
    local s = st
    if s == nil then
      if p.initialTokens >= p.capacity then
        return full(now, now - now % p.period, p)
      end
      return fresh(now, p)
    end
    -- math.max(now, s.lastRefill), written out (speed, as in duration).
    local at = now
    if s.lastRefill > now then
      at = s.lastRefill
    end
    local r = refill(s, at, p)
    if s.refunded ~= nil then
      r.refunded = s.refunded                                     -- the refund clock rides along
    end
    return r
  end

  function M.step(st, now, permits, maxWaitMicros, p)
    local s = refilled(st, now, p)
    -- math.max(0, s.tokens), written out (speed, as in duration).
    local left = s.tokens
    if not (left > 0) then
      left = 0
    end
    if permits == 0 then
      return S.allow(0, left, resetAfter(s, now, p), st, st)
    end
    -- A rejection records the key's creation (the Java essay's "Creation"): the bucket refills from now on.
    local rejected = st
    if st == nil and p.initialTokens < p.capacity then
      rejected = fresh(now, p)
    end
    if permits <= s.tokens then
      local after = state(s.tokens - permits, s.lastRefill, s.roundingError, s.refunded)
      return allowAfter(0, after.tokens, after, now, rejected, p)
    end
    local wait = duration(readyAt(s, permits, p), now)
    -- Java: capacity - (tokens - permits) <= MAX_DEFICIT; that sum reaches 2^53 + capacity, so compare the
    -- exact tokens - permits (>= -2^53, permits <= capacity) with the exact capacity - MAX_DEFICIT instead.
    local reservable = maxWaitMicros > 0 and wait ~= NEVER and wait <= maxWaitMicros
        and s.tokens - permits >= p.capacity - MAX_DEFICIT
    if reservable then
      local after = state(s.tokens - permits, s.lastRefill, s.roundingError, s.refunded)
      return allowAfter(wait, 0, after, now, rejected, p)
    end
    return S.reject(left, wait, resetAfter(s, now, p), rejected)
  end

  function M.grantable(st, now, permits, p)
    return math.max(0, math.min(permits, refilled(st, now, p).tokens))
  end

  -- Refill up to now under the previous parameters, cap at the new capacity (Bucket4j AS_IS), keep the
  -- greedy partial token only when the reduced rate stays the same; joining INTERVAL_ALIGNED snaps to the grid.
  function M.migrate(st, previous, now, p)
    if st == nil then
      return nil
    end
    local old = previous
    local at = math.max(now, st.lastRefill)
    local s = refill(st, at, old)
    local tokens = math.max(math.min(s.tokens, p.capacity), p.capacity - MAX_DEFICIT)
    local sameGreedyRate = p.style == "greedy" and old.style == "greedy" and p.a == old.a and p.b == old.b
    local roundingError = 0
    if sameGreedyRate and tokens < p.capacity then
      roundingError = s.roundingError
    end
    local lastRefill = s.lastRefill
    if p.style == "interval_aligned" and (old.style ~= "interval_aligned" or old.period ~= p.period) then
      lastRefill = at - at % p.period
    end
    return state(tokens, lastRefill, roundingError, st.refunded)
  end

  -- Settling a ticket: TokenBucketAlgorithm's Settleable (mark, settle), whose comment derives it (gcra's refund
  -- clock, with "full again" as the TAT). The mark is fullAt + refunded of the admitted state, at most MAX_TIME.
  function M.mark(admitted, now, p)
    local f = fullAt(admitted, p)
    local r = admitted.refunded or 0
    if f > MAX_TIME - r then
      return MAX_TIME
    end
    return f + r
  end

  -- Tokens the refill brings strictly after now and strictly before untilAt (A'), on untilAt's grid.
  local function roomBefore(untilAt, now, p)
    if p.style == "greedy" then
      if untilAt - 1 > now then
        return S.mul_div_floor(p.a, untilAt - 1 - now, p.b)
      end
      return 0
    end
    if untilAt > now then
      return S.mul_sat(S.ceil_div(untilAt - now, p.period) - 1, p.refillTokens)
    end
    return 0
  end

  -- µs the refill takes to bring `tokens` tokens, rounded up (whole periods for the interval styles).
  local function clockOf(tokens, p)
    if p.style == "greedy" then
      return S.mul_div_ceil(tokens, p.b, p.a)
    end
    return S.mul_sat(S.ceil_div(tokens, p.refillTokens), p.period)
  end

  function M.settle(st, now, mark, estimate, actual, p)
    if actual == estimate or (st == nil and actual < estimate) then
      return st
    end
    local s = refilled(st, now, p)
    local refunded = s.refunded or 0
    if actual > estimate then
      return state(math.max(p.capacity - MAX_DEFICIT, s.tokens - (actual - estimate)), s.lastRefill, s.roundingError,
        s.refunded)
    end
    local refund = math.min(estimate - actual, roomBefore(mark - refunded, now, p))
    if refund <= 0 then
      return st
    end
    local clock = clockOf(refund, p)
    if clock > MAX_TIME - refunded then
      return st
    end
    local tokens = s.tokens + refund
    if tokens >= p.capacity then
      local f = full(math.max(now, s.lastRefill), s.lastRefill, p)
      f.refunded = refunded + clock
      return f
    end
    return state(tokens, s.lastRefill, s.roundingError, refunded + clock)
  end

  ALG["token_bucket"] = M
end
