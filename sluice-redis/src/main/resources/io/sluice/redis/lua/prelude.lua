-- prelude.lua: helpers shared by every algorithm port (algorithms/*.lua) and by the dispatcher (rule.lua).
--
-- The script Redis runs is this file, then every algorithms/<name>.lua, then rule.lua, concatenated in that
-- fixed order into ONE chunk (see docs/redis-script-protocol.md). Redis forbids creating globals, so the two
-- tables below are locals of that chunk, visible to every file after this one:
--   sluice  the helpers
--   ALG     the registry: each algorithm file adds ALG["<name>"] = <module>
--
-- Numbers. Lua 5.1 numbers are IEEE doubles: integers are exact only up to 2^53 (Sluice's MAX_TIME; every
-- count and duration is far below it). The pitfalls, each handled here:
--   1. Never hand a number to redis.call. Redis turns it into a string itself: with Lua's %.14g before the
--      fix of redis/redis#1118 (1767225600000001 became 1.7672256e+15), and since then with 17 significant
--      digits, so an integer from 10^17 up arrives as "1.152921504606847e+18" and a fraction as "1.5", which
--      PEXPIRE and friends reject. Format with sluice.fmt_int / sluice.fmt_num first.
--   2. tostring(x) and "k:" .. x use Lua's own %.14g: 1767225600000001 prints as 1.7672256e+15. Build strings
--      with sluice.fmt_int too.
--   3. Never return a number from the script: Redis truncates it to an integer reply (1.7 becomes 1) and
--      cannot carry 2^63-1. Replies are strings, made with sluice.fmt_int.
--   4. A product (a count times a duration) or a sum (a time plus a window) can pass 2^53 and silently round.
--      sluice.mul_div_floor / mul_div_ceil compute floor(a * b / c) exactly, as Java's Arith.mulDivFloor /
--      mulDivCeil do; write sums as differences (t - start < window, not t < start + window).
-- Division is safe: for integers 0 <= a <= 2^53 and b > 0, math.floor(a / b) and a % b are exact. (A non-integer
-- quotient is at least 1/b away from the next integer, and half its ulp is at most 1/b, equal only when b is
-- a power of two and the division exact, so rounding never reaches the integer; PreludeIT checks it.)
-- sluice.floor_div / floor_mod / ceil_div name Java's Math.floorDiv / floorMod / Arith.ceilDiv for
-- line-by-line ports, and use math.fmod, exact for any doubles.
-- tonumber on a stored decimal string is exact for integers up to 2^53, and for doubles written with %.17g.

local sluice = {}
local ALG = {}

-- Java's Long.MAX_VALUE ("unbounded": an unbounded maxWait, a retry-after no waiting satisfies) is math.huge
-- in Lua, both ways.
sluice.FOREVER = math.huge
local LONG_MAX = "9223372036854775807"
local TWO_53 = 9007199254740992
local TWO_63 = 9223372036854775808

-- ------------------------------------------------------------------------------------------ arguments

--- An integer argument (ARGV word): exact up to 2^53; "9223372036854775807" (Long.MAX_VALUE) is math.huge.
function sluice.arg_int(s)
  if s == LONG_MAX then
    return math.huge
  end
  local x = tonumber(s)
  if x == nil or x ~= math.floor(x) then
    error("sluice: expected an integer, got '" .. tostring(s) .. "'")
  end
  return x
end

--- A double argument, written by Java as 17 significant digits: the same double, bit for bit.
function sluice.arg_num(s)
  local x = tonumber(s)
  if x == nil then
    error("sluice: expected a number, got '" .. tostring(s) .. "'")
  end
  return x
end

--- A boolean argument: "1" or "0".
function sluice.arg_bool(s)
  if s == "1" then
    return true
  elseif s == "0" then
    return false
  end
  error("sluice: expected 1 or 0, got '" .. tostring(s) .. "'")
end

--- The words of a space-separated string, as a list.
function sluice.words(s)
  local out = {}
  for w in string.gmatch(s, "%S+") do
    out[#out + 1] = w
  end
  return out
end

-- ------------------------------------------------------------------------------------------ formatting

--- An integer as a decimal string, for redis.call and replies. math.huge (and anything at or above 2^63)
--- becomes Long.MAX_VALUE; a fraction is a bug in the caller and fails loudly.
function sluice.fmt_int(x)
  if x >= TWO_63 then
    return LONG_MAX
  end
  if x ~= math.floor(x) then
    error("sluice: not an integer: " .. string.format("%.17g", x))
  end
  return string.format("%d", x)
end

--- A double as a string that reads back as the same double.
function sluice.fmt_num(x)
  return string.format("%.17g", x)
end

-- ------------------------------------------------------------------------------------------ exact arithmetic

--- a mod b with the sign of b (Java's Math.floorMod), exact: math.fmod is exact for doubles.
function sluice.floor_mod(a, b)
  local r = math.fmod(a, b)
  if r < 0 then
    r = r + b
  end
  return r
end

--- floor(a / b) for integers, b > 0, |a| <= 2^53 (Java's Math.floorDiv). a - fmod(a, b) is a multiple of b no
--- larger than a, so the division is exact; it truncates, so a negative remainder steps down one.
function sluice.floor_div(a, b)
  local t = math.fmod(a, b)
  local q = (a - t) / b
  if t < 0 then
    q = q - 1
  end
  return q
end

--- ceil(a / b) for integers, b > 0, |a| <= 2^53 (Java's Arith.ceilDiv, for a >= 0).
function sluice.ceil_div(a, b)
  local t = math.fmod(a, b)
  local q = (a - t) / b
  if t > 0 then
    q = q + 1
  end
  return q
end

--- The base-2^24 digits of an integer 0 <= a <= 2^53, least significant first.
local function limbs(a)
  local l0 = math.fmod(a, 16777216)
  local rest = (a - l0) / 16777216
  local l1 = math.fmod(rest, 16777216)
  return { l0, l1, (rest - l1) / 16777216 }
end

--- floor(a * b / c) and whether it has a remainder, for integers a, b in [0, 2^53] and c in [1, 2^52].
--- The quotient is exact when below 2^53. Above it no double is exact: the result is then at least 2^53
--- (math.huge from 2^63, where Java saturates at Long.MAX_VALUE), so it still compares right against any bound
--- up to 2^53 -- which is all an algorithm may compare it with. Products below 2^53 take the fast path.
local function mul_div(a, b, c)
  local p = a * b
  if p < TWO_53 then
    -- a rounded product below 2^53 means the exact product is below 2^53: p is exact.
    local r = math.fmod(p, c)
    return (p - r) / c, r > 0
  end
  -- Schoolbook product in base 2^24 (every partial sum stays below 2^53), then binary long division:
  -- the remainder stays below c <= 2^52, so 2r + 1 is exact.
  local x, y = limbs(a), limbs(b)
  local digits = { 0, 0, 0, 0, 0, 0 }
  for i = 1, 3 do
    for j = 1, 3 do
      digits[i + j - 1] = digits[i + j - 1] + x[i] * y[j]
    end
  end
  for k = 1, 5 do
    local d = math.fmod(digits[k], 16777216)
    digits[k + 1] = digits[k + 1] + (digits[k] - d) / 16777216
    digits[k] = d
  end
  local q, r = 0, 0
  for k = 6, 1, -1 do
    local d = digits[k]
    for bitv = 23, 0, -1 do
      local weight = 2 ^ bitv
      local b1 = 0
      if d >= weight then
        b1 = 1
        d = d - weight
      end
      r = 2 * r + b1
      q = 2 * q
      if r >= c then
        r = r - c
        q = q + 1
      end
    end
  end
  if q >= TWO_63 then
    q = math.huge
  end
  return q, r > 0
end

--- floor(a * b / c), exact (see mul_div); Java's Arith.mulDivFloor.
function sluice.mul_div_floor(a, b, c)
  local q = mul_div(a, b, c)
  return q
end

--- ceil(a * b / c), exact (see mul_div); Java's Arith.mulDivCeil.
function sluice.mul_div_ceil(a, b, c)
  local q, rest = mul_div(a, b, c)
  if rest then
    q = q + 1
  end
  return q
end

-- ------------------------------------------------------------------------------------------ verdicts

--- Java's Step.allow: an admitting verdict. Field names are the Step record's.
function sluice.allow(waitMicros, remaining, resetAfterMicros, admitted, rejected)
  return { allowed = true, waitMicros = waitMicros, remaining = remaining, retryAfterMicros = 0,
           resetAfterMicros = resetAfterMicros, admitted = admitted, rejected = rejected, lease = -1 }
end

--- Java's Step.reject: a rejecting verdict (admitted is nil).
function sluice.reject(remaining, retryAfterMicros, resetAfterMicros, rejected)
  return { allowed = false, waitMicros = 0, remaining = remaining, retryAfterMicros = retryAfterMicros,
           resetAfterMicros = resetAfterMicros, admitted = nil, rejected = rejected, lease = -1 }
end

-- ------------------------------------------------------------------------------------------ state storage

-- The default storage of a state: one Redis hash per limit and key, one hash field per field of the Java
-- State record (named as in Java), plus "_p", the fingerprint "<algorithm> <parameter words>" the state was
-- written under. A module declares its fields as { { "windowStart", "int" }, { "count", "int" } }; the kinds:
--   int   an integer (Java long), stored with fmt_int
--   num   a double, stored with fmt_num (Guava's algorithms only)
--   ints  a list of integers (Java long[]), stored as "1,2,3" ("" for an empty list)

local function encode(kind, v)
  if kind == "int" then
    return sluice.fmt_int(v)
  elseif kind == "num" then
    return sluice.fmt_num(v)
  elseif kind == "ints" then
    local out = {}
    for i = 1, #v do
      out[i] = sluice.fmt_int(v[i])
    end
    return table.concat(out, ",")
  end
  error("sluice: unknown field kind '" .. tostring(kind) .. "'")
end

local function decode(kind, s)
  if kind == "int" then
    return sluice.arg_int(s)
  elseif kind == "num" then
    return sluice.arg_num(s)
  elseif kind == "ints" then
    local out = {}
    for w in string.gmatch(s, "[^,]+") do
      out[#out + 1] = sluice.arg_int(w)
    end
    return out
  end
  error("sluice: unknown field kind '" .. tostring(kind) .. "'")
end

--- Reads a state stored by save_hash. Returns state (nil when absent or incomplete), the stored fingerprint
--- (nil when absent) and whether the key existed at all.
function sluice.load_hash(key, fields)
  local flat = redis.call("HGETALL", key)
  if #flat == 0 then
    return nil, nil, false
  end
  local raw = {}
  for i = 1, #flat, 2 do
    raw[flat[i]] = flat[i + 1]
  end
  local state = {}
  for _, field in ipairs(fields) do
    local s = raw[field[1]]
    if s == nil then
      return nil, raw["_p"], true
    end
    state[field[1]] = decode(field[2], s)
  end
  return state, raw["_p"], true
end

--- Writes a state as load_hash reads it. The caller (rule.lua) sets the key's expiry right after.
function sluice.save_hash(key, state, fields, fingerprint)
  local args = { "HSET", key, "_p", fingerprint }
  for _, field in ipairs(fields) do
    args[#args + 1] = field[1]
    args[#args + 1] = encode(field[2], state[field[1]])
  end
  redis.call(unpack(args))
end

-- ------------------------------------------------------------------------------------------ time

--- Redis server time in microseconds: seconds * 10^6 + micros (about 1.8e15 today, exact).
function sluice.server_now()
  local t = redis.call("TIME")
  return tonumber(t[1]) * 1000000 + tonumber(t[2])
end

--- Gives key the expiry expiresAt (microseconds, in the time base of now). With server time that is an
--- absolute PEXPIREAT, rounded up to the millisecond: exact. With client time the two clocks differ, so the
--- key lives the remaining duration counted on the server's clock, plus CLIENT_TIME_SLACK_MS for clocks that
--- run a little slower than the server's (a test's frozen manual clock between two calls). Decisions never
--- depend on it: rule.lua drops a state at expiresAt by the client's clock whatever the key's TTL.
local CLIENT_TIME_SLACK_MS = 1000

function sluice.expire(key, expiresAt, now, client_time)
  if expiresAt == math.huge then
    error("sluice: a state must expire (expiresAt returned math.huge) for key " .. key)
  end
  if client_time then
    local ms = sluice.ceil_div(expiresAt - now, 1000) + CLIENT_TIME_SLACK_MS
    redis.call("PEXPIRE", key, sluice.fmt_int(ms))
  else
    redis.call("PEXPIREAT", key, sluice.fmt_int(sluice.ceil_div(expiresAt, 1000)))
  end
end
