-- settle.lua: a rule's tickets of estimated charges (io.sluice.internal.memory.MemorySettling; the reference is
-- docs/reference/settle.md). Part of the decision script, before rule.lua, which calls these three functions
-- for its ops "charge" and "settle".
--
-- A ticket is one string at its own key, in the hash slot of the limits' keys:
--   "estimate expiresAt n fingerprint_1 mark_1 ... fingerprint_n mark_n"
-- expiresAt is the call's now plus the ticket's lifetime (so a client clock, which Redis's TTL does not follow,
-- expires it too); the key's own TTL is the lifetime, plus the client-time slack when the client sends the time.

-- One function that builds the three when a call needs them (rule.lua: ops "charge" and "settle" only), so the
-- other calls pay for one closure, not three (docs/redis-script-protocol.md, "A call builds only the modules it
-- uses").
local function sluice_tickets()
  -- Whether a live ticket is stored at key.
  local function open(key, now)
    local stored = redis.call("GET", key)
    if not stored then
      return false
    end
    local w = sluice.words(stored)
    return now < tonumber(w[2])
  end

  -- After an admitted charge: the ticket, with each limit's fingerprint and mark (the algorithm's `mark` of the
  -- state the charge committed).
  local function write(key, limits, now, estimate, lifetime, client_time, client_slack_ms)
    local life = sluice.arg_int(lifetime)
    local parts = { estimate, sluice.fmt_int(now + life), tostring(#limits) }
    for i = 1, #limits do
      local limit = limits[i]
      parts[#parts + 1] = limit.fingerprint
      -- No state after the admission: a shadow limit that would have rejected a fresh key, charged nothing.
      if limit.state == nil then
        parts[#parts + 1] = "-1"
      else
        parts[#parts + 1] = sluice.fmt_int(limit.alg.mark(limit.state, now, limit.p))
      end
    end
    local ttl = math.ceil(life / 1000)
    if client_time then
      ttl = ttl + client_slack_ms
    end
    redis.call("SET", key, table.concat(parts, " "), "PX", ttl)
  end

  -- Takes the ticket out (deleting it) and settles each limit the ticket charged, at its position with the same
  -- fingerprint, through `commit`. Returns settled, estimate, actual; a ticket absent or expired settles nothing.
  local function settle(key, limits, now, amount, commit)
    local stored = redis.call("GET", key)
    if not stored then
      return false, 0, 0
    end
    redis.call("DEL", key)
    local w = sluice.words(stored)
    local estimate = sluice.arg_int(w[1])
    if now >= sluice.arg_int(w[2]) then
      return false, 0, 0
    end
    local actual = sluice.arg_int(amount)
    local count = tonumber(w[3])
    if actual ~= estimate then
      for i = 1, math.min(count, #limits) do
        local limit = limits[i]
        if w[2 + 2 * i] == limit.fingerprint and w[3 + 2 * i] ~= "-1" then
          local next_state = limit.alg.settle(limit.state, now, sluice.arg_int(w[3 + 2 * i]), estimate, actual, limit.p)
          if next_state ~= limit.state or limit.dirty then
            commit(limit, next_state)
          end
        end
      end
    end
    return true, estimate, actual
  end

  return { open = open, write = write, settle = settle }
end
