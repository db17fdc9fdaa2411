-- lib/state_write.lua: writing a limit's state and its expiry, or deleting its key: what every call that writes
-- needs, and no rejection that changes nothing. Built on first use (see core.lua): not run at the top level.
-- Uses state.lua's locals.

--- An integer as base-36 digits (lower case, '-' when negative): exact for every integer double below 2^63
--- in magnitude; math.huge (anything at or above 2^63) is Long.MAX_VALUE, as in fmt_int.
function sluice.fmt_b36(x)
  if x >= TWO_63 then
    return B36_LONG_MAX
  end
  if x ~= math.floor(x) or x <= -TWO_63 then
    error("sluice: not a storable integer: " .. string.format("%.17g", x))
  end
  local sign = ""
  if x < 0 then
    sign = "-"
    x = -x
  end
  if x == 0 then
    return "0"
  end
  local out = {}
  if x < TWO_53 then
    -- x - d is a multiple of 36 below 2^53: the division is exact (and so is x % 36, see the header).
    -- The digits are character codes, most significant first, turned into a string by one C call.
    local k = 0
    while x > 0 do
      local d = x % 36
      k = k + 1
      out[k] = d < 10 and d + 48 or d + 87
      x = (x - d) / 36
    end
    for i = 1, k / 2 do
      out[i], out[k + 1 - i] = out[k + 1 - i], out[i]
    end
    if sign == "" then
      return string.char(unpack(out))
    end
    return sign .. string.char(unpack(out))
  else
    -- Above 2^53 the quotient may not be a double: divide the pair (hi, lo) = x as hi * 2^32 + lo instead,
    -- every step exact (rh * 2^32 + lo < 36 * 2^32).
    local lo = math.fmod(x, TWO_32)
    local hi = (x - lo) / TWO_32
    while hi > 0 or lo > 0 do
      local rh = math.fmod(hi, 36)
      hi = (hi - rh) / 36
      local t = rh * TWO_32 + lo
      local d = math.fmod(t, 36)
      lo = (t - d) / 36
      out[#out + 1] = string.sub(B36, d + 1, d + 1)
    end
  end
  return sign .. string.reverse(table.concat(out))
end

--- A double as the shortest of %.15g, %.16g and %.17g that reads back as the same double (%.17g always does).
function sluice.fmt_short(x)
  local s = string.format("%.15g", x)
  if tonumber(s) == x then
    return s
  end
  s = string.format("%.16g", x)
  if tonumber(s) == x then
    return s
  end
  return string.format("%.17g", x)
end

local function encode(kind, v)
  if kind == "int" then
    return sluice.fmt_b36(v)
  elseif kind == "num" then
    return sluice.fmt_short(v)
  elseif kind == "ints" then
    local out = {}
    for i = 1, #v do
      out[i] = sluice.fmt_b36(v[i])
    end
    return table.concat(out, ",")
  end
  error("sluice: unknown field kind '" .. tostring(kind) .. "'")
end

-- The character codes of the integer fields encode_state writes in one pass; reused, and read only up to what
-- the call wrote (a functions library keeps it between calls: scratch space, never read before it is written).
local CODES = {}

--- A state as the stored string "<fingerprint>|<field>|<field>...", fields in the order of `fields`.
function sluice.encode_state(state, fields, fingerprint)
  -- The common state, integer fields below 2^53 in magnitude (every state of token_bucket, gcra, fixed_window and
  -- most others), in one pass: the digits of every field, with the signs and separators, as character codes in
  -- CODES, turned into one string by one string.char, instead of a table, a string and a reversal per field and a
  -- table.concat. The same text as fmt_b36 per field (LuaLibrariesIT compares the two).
  local k = 0
  for i = 1, #fields do
    local field = fields[i]
    local x = state[field[1]]
    if field[2] ~= "int" or not (x < TWO_53 and x > -TWO_53 and x % 1 == 0) then
      k = -1
      break
    end
    k = k + 1
    CODES[k] = 124                                   -- "|"
    if x < 0 then
      k = k + 1
      CODES[k] = 45                                  -- "-"
      x = -x
    end
    -- The digits, least significant first (exact: see fmt_b36), then reversed in place.
    local first = k + 1
    repeat
      local d = x % 36
      k = k + 1
      CODES[k] = d < 10 and d + 48 or d + 87
      x = (x - d) / 36
    until x == 0
    local j = k
    while first < j do
      CODES[first], CODES[j] = CODES[j], CODES[first]
      first = first + 1
      j = j - 1
    end
  end
  if k > 0 then
    return fingerprint .. string.char(unpack(CODES, 1, k))
  end
  local out = { fingerprint }
  for i = 1, #fields do
    local field = fields[i]
    out[i + 1] = encode(field[2], state[field[1]])
  end
  return table.concat(out, "|")
end

--- Writes a state as load_value reads it (replacing a value of any type) with its expiry in the same command:
--- option and ms are what sluice.ttl returns ("PXAT" or "PX" and the milliseconds). One SET instead of a SET and
--- a PEXPIREAT saves a command on every write (SET's PXAT needs Redis 6.2).
function sluice.save_value(key, state, fields, fingerprint, option, ms)
  redis.call("SET", key, sluice.encode_state(state, fields, fingerprint), option, ms)
end

--- The expiry expiresAt (microseconds, in the time base of now) as the option and value of SET (or the command
--- and value of sluice.expire). With server time that is an absolute time, rounded up to the millisecond: exact.
--- With client time the two clocks differ, so the key lives the remaining duration counted on the server's clock,
--- plus slack_ms (sent by the client with its time; RedisStore.Builder.clientTimeSlack) for clocks that do not run
--- at the server's pace (a test's frozen manual clock, a replay's virtual clock). Decisions never depend on it
--- while a key outlives its state: rule.lua drops a state at expiresAt by the client's clock whatever the key's TTL.
--- expiresAt must be after now.
function sluice.ttl(expiresAt, now, client_time, slack_ms)
  if expiresAt > TWO_53 then
    -- No clock reading passes MAX_TIME (2^53), so a state that expires later, or never (math.huge, Java's
    -- Long.MAX_VALUE: a token bucket refilling 10^12 tokens at one a day) lives until then: the key still
    -- gets a TTL, no longer than any decision can need it.
    expiresAt = TWO_53
  end
  if client_time then
    return "PX", sluice.fmt_int(sluice.ceil_div(expiresAt - now, 1000) + slack_ms)
  end
  return "PXAT", sluice.fmt_int(sluice.ceil_div(expiresAt, 1000))
end

--- Gives an existing key the expiry expiresAt (see sluice.ttl): for keys written by other commands than
--- save_value (sliding_log's M.save, sync.lua's marker hash).
function sluice.expire(key, expiresAt, now, client_time, slack_ms)
  local option, ms = sluice.ttl(expiresAt, now, client_time, slack_ms)
  if option == "PX" then
    redis.call("PEXPIRE", key, ms)
  else
    redis.call("PEXPIREAT", key, ms)
  end
end

--- Writes a limit's next state with its expiry, or deletes its key when there is nothing left to remember.
--- expiresAt: the state's M.expiresAt when the step gave it (lib/verdict.lua), else nil (computed here).
function sluice.store_limit(limit, state, now, client_time, slack_ms, expiresAt)
  sluice.store_state(limit.key, limit.alg, limit.p, limit.fingerprint, state, now, client_time, slack_ms, expiresAt)
end

--- store_limit for a limit given by its key, module, parsed parameters and fingerprint (rule_one.lua's fast path
--- builds no limit table; rule.lua saves a call per limit).
function sluice.store_state(key, alg, p, fingerprint, state, now, client_time, slack_ms, expiresAt)
  if state ~= nil and expiresAt == nil then
    expiresAt = alg.expiresAt(state, p)
  end
  if state == nil or expiresAt <= now then
    redis.call("DEL", key)
    return
  end
  if alg.save then
    alg.save(key, state, p, fingerprint)
    sluice.expire(key, expiresAt, now, client_time, slack_ms)
  else
    local option, ms = sluice.ttl(expiresAt, now, client_time, slack_ms)
    -- A state the module can give as ONE integer (gcra's TAT) is stored as one (state_int.lua).
    if alg.to_int then
      local x = alg.to_int(state)
      if x ~= nil then
        redis.call("SET", key, sluice.encode_int(x, fingerprint), option, ms)
        return
      end
    end
    -- A module whose states do not all have the same fields (gcra's refund clock) says which to write.
    local fields = alg.fields
    if alg.fields_of then
      fields = alg.fields_of(state)
    end
    sluice.save_value(key, state, fields, fingerprint, option, ms)
  end
end
