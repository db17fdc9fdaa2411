-- lockout.lua: a rule's lockout, a line-by-line port of io.sluice.internal.LockoutEvaluator (its Javadoc has
-- the model and the derivation). rule.lua calls it around the limits' decision of the single form, in the same
-- script call, so the count and the lockout are atomic with the limits.
--
-- The lockout's state lives at one more key of the rule on the key, in the limits' hash slot (KEYS[#KEYS],
-- "<base>:%lockout", which no escaped limit name can spell), as "count since ends after within" in decimal:
-- rejections counted in the window opened at since, the end of the last lockout (0: none; Java's "until", a
-- keyword in Lua), and the lockout's after and within the count was counted under (a count of others is no
-- count: LockoutEvaluator, "A changed lockout"). A state of three words was written before the parameters
-- were stored: its count is taken as counted under the call's. Its times are in the
-- call's time base (Redis TIME, or the client's clock), as the limits' are. The key's TTL is the state's
-- expiry (sluice.expire, as for a limit); reset deletes it with the limits' keys.
--
-- Cost: this file defines one function per call; the module's functions are built only for a rule that has a
-- lockout (see the prelude's "Cost").

--- The lockout of a call: its parameters ("after within for", microseconds) and its state at now, read from
--- key. Returns a table with open's fields and the functions blocked_for, rejected and store.
local function sluice_lockout(key, words, now)
  local after, within, duration = string.match(words, "^(%d+) (%d+) (%d+)$")
  if after == nil then
    error("sluice: malformed lockout parameters '" .. tostring(words) .. "'")
  end
  local lock = { key = key, after = tonumber(after), within = tonumber(within), duration = tonumber(duration),
                 state = nil, write = false }

  -- LockoutEvaluator.counts: the state holds a count, counted under this lockout's after and within.
  local function counts(s)
    return s.count ~= 0 and s.after == lock.after and s.within == lock.within
  end

  -- LockoutEvaluator.expired: the state means no state once the lockout is over and the window closed.
  local function expired(s)
    return now >= s.ends and (not counts(s) or now - s.since >= lock.within)
  end

  local value = redis.call("GET", key)
  if value then
    local c, s, u, a, w = string.match(value, "^(%d+) (%d+) (%d+) (%d+) (%d+)$")
    if c == nil then
      c, s, u = string.match(value, "^(%d+) (%d+) (%d+)$")
      a, w = after, within
    end
    if c == nil then
      error("sluice: malformed lockout state at " .. key)
    end
    lock.state = { count = tonumber(c), since = tonumber(s), ends = tonumber(u), after = tonumber(a),
                   within = tonumber(w) }
    if expired(lock.state) then
      lock.state = nil
    end
  end

  --- Microseconds the key stays locked out at now; 0 when it is not.
  function lock.blocked_for()
    local s = lock.state
    if s ~= nil and now < s.ends then
      return s.ends - now
    end
    return 0
  end

  --- LockoutEvaluator.rejected: counts a rejection at now; returns the time left in the lockout it starts, or 0.
  function lock.rejected()
    local s = lock.state
    local ends = 0
    if s ~= nil then
      ends = s.ends
    end
    local count, since = 1, now
    if s ~= nil and counts(s) and now - s.since < lock.within then
      count, since = s.count + 1, s.since
    end
    lock.write = true
    if count >= lock.after then
      -- now + for is exact up to 2^53, and no clock reading passes it (LockoutEvaluator: Arith.MAX_TIME).
      ends = math.min(now + lock.duration, 9007199254740992)
      lock.state = { count = 0, since = now, ends = ends, after = lock.after, within = lock.within }
      return ends - now
    end
    lock.state = { count = count, since = since, ends = ends, after = lock.after, within = lock.within }
    return 0
  end

  --- Writes the state a rejection changed, with its expiry (LockoutEvaluator.expiresAt).
  function lock.store(client_time, slack_ms)
    if not lock.write then
      return
    end
    local s = lock.state
    local fmt = sluice.fmt_int
    redis.call("SET", key, fmt(s.count) .. " " .. fmt(s.since) .. " " .. fmt(s.ends) .. " " .. fmt(s.after) .. " "
      .. fmt(s.within))
    -- LockoutEvaluator.expiresAt; the state was just counted under this lockout's parameters.
    local expires_at = s.ends
    if s.count ~= 0 and s.since + lock.within > expires_at then
      expires_at = s.since + lock.within
    end
    sluice.expire(key, expires_at, now, client_time, slack_ms)
  end

  return lock
end
