-- prelude.lua: helpers shared by every algorithm port (algorithms/*.lua) and by the dispatcher (rule.lua).
--
-- The script Redis runs is this file, then every algorithms/<name>.lua as one branch of the function
-- sluice.algorithm(name) that SluiceScript generates around them, then rule.lua: ONE chunk (see
-- docs/redis-script-protocol.md). Redis forbids creating globals, so the two tables below are locals of that
-- chunk, visible to every file after this one:
--   sluice  the helpers
--   ALG     the registry: each algorithm file adds ALG["<name>"] = <module>, when sluice.algorithm(name) first
--           runs it in a call
--
-- Cost. Redis runs the whole chunk on every call, and nothing survives a call (globals and the standard
-- tables are read-only), so everything here is built again for every decision: each `function` statement
-- allocates a closure, each table constructor a table. On Redis 7.0, counted with callgrind, a closure costs
-- about 500 machine instructions, a table about 2,000, a call into C (string.*, math.*, tonumber, redis.call)
-- about 800 before it does anything, and a string that is not already interned an allocation and a hash; a
-- whole token-bucket decision is about 270,000. So this file defines only what calls need, and the helpers on
-- every decision's path avoid C calls where the VM does the same exactly: x % 1 instead of math.floor(x) to
-- test an integer, x % 36 instead of math.fmod below 2^53, one string.match instead of a loop of
-- string.find and string.sub, constant strings for the commonest reply values.
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
-- tonumber on a stored decimal string is exact for integers up to 2^53, and for doubles written with %.17g;
-- states are stored in base 36 (sluice.fmt_b36 / arg_b36, exact the same way).

-- sluice is built with a slot for every helper defined unconditionally below, so defining them never grows
-- (rehashes) the table: that costs a few thousand instructions per call otherwise. The helpers only some
-- algorithms or only writes need are built on first use (see "Built on first use" at the end of this file).
local sluice = { FOREVER = false, algorithm = false, arg_int = false, words = false, fmt_int = false,
                 floor_div = false, ceil_div = false, allow = false, reject = false,
                 decode_state = false, get_value = false, load_value = false, server_now = false, settle = false,
                 call_time = false }
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
  -- Strings are interned: these comparisons are pointer comparisons, tonumber a call into C.
  if s == "1" then
    return 1
  elseif s == "0" then
    return 0
  elseif s == LONG_MAX then
    return math.huge
  end
  local x = tonumber(s)
  if x == nil or x % 1 ~= 0 then
    error("sluice: expected an integer, got '" .. tostring(s) .. "'")
  end
  return x
end

--- The words of a space-separated string, as a list.
function sluice.words(s)
  -- The pattern for n words (1 to 6) separated by single spaces, to split them in ONE string.match call
  -- (string.gmatch calls back into C once per word, which costs more than the rest of a limit's parse).
  local _, spaces = string.gsub(s, " ", " ")
  local pattern = nil
  if spaces == 4 then
    pattern = "^(%S+) (%S+) (%S+) (%S+) (%S+)$"
  elseif spaces == 3 then
    pattern = "^(%S+) (%S+) (%S+) (%S+)$"
  elseif spaces == 2 then
    pattern = "^(%S+) (%S+) (%S+)$"
  elseif spaces == 1 then
    pattern = "^(%S+) (%S+)$"
  elseif spaces == 0 then
    pattern = "^(%S+)$"
  elseif spaces == 5 then
    pattern = "^(%S+) (%S+) (%S+) (%S+) (%S+) (%S+)$"
  end
  if pattern ~= nil then
    local out = { string.match(s, pattern) }
    if out[1] ~= nil then
      return out
    end
  end
  -- More words, or not single spaces between them.
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
  -- The commonest values of a reply need no string.format.
  if x == 0 then
    return "0"
  elseif x == 1 then
    return "1"
  elseif x == -1 then
    return "-1"
  end
  if x >= TWO_63 then
    return LONG_MAX
  end
  if x % 1 ~= 0 then
    error("sluice: not an integer: " .. string.format("%.17g", x))
  end
  return string.format("%d", x)
end

-- ------------------------------------------------------------------------------------------ exact arithmetic

--- floor(a / b) for integers, b > 0, |a| <= 2^53 (Java's Math.floorDiv). a - fmod(a, b) is a multiple of b no
--- larger than a, so the division is exact; it truncates, so a negative remainder steps down one.
function sluice.floor_div(a, b)
  if a >= 0 and a <= TWO_53 and b <= TWO_53 then
    -- The commonest case, without a call into C: a % b is exact here (see the header; math.fmod is needed
    -- for a negative a, and for b = math.huge, where a % b is not a).
    local r = a % b
    return (a - r) / b
  end
  local t = math.fmod(a, b)
  local q = (a - t) / b
  if t < 0 then
    q = q - 1
  end
  return q
end

--- ceil(a / b) for integers, b > 0, |a| <= 2^53 (Java's Arith.ceilDiv, for a >= 0).
function sluice.ceil_div(a, b)
  if a >= 0 and a <= TWO_53 and b <= TWO_53 then
    local r = a % b
    if r > 0 then
      return (a - r) / b + 1
    end
    return a / b
  end
  local t = math.fmod(a, b)
  local q = (a - t) / b
  if t > 0 then
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

-- The default storage of a state: ONE Redis string per limit and key, as small as it can be read back exactly
-- (docs/redis-script-protocol.md, "State storage"):
--
--   <fingerprint>|<field 1>|<field 2>|...     e.g. sCp3P_|hefg8dts00|2   (fixed_window 3 1000000 epoch 0:
--                                                 windowStart 1767225600000000, count 2)
--
-- <fingerprint> is the limit version's short fingerprint (ARGV, computed in Java), the fields follow the
-- module's M.fields in order, and '|' never occurs inside one. The field kinds:
--   int   an integer (Java long) in base 36, lower case, with a leading '-' when negative ("hefg8dts00" is
--         1767225600000000); Long.MAX_VALUE (math.huge) is "1y2p0ij32e8e7"
--   num   a double (Guava's algorithms) as the shortest of %.15g, %.16g, %.17g that reads back bit for bit
--   ints  a list of integers (Java long[]), each in base 36, joined by ',' ("" for an empty list)
-- 36 bits of fingerprint and base-36 integers keep a state of three fields at realistic values (times about
-- 1.8e15 us: 10 digits; counts up to 10^6: 4 digits) within 28 characters, the largest value Redis stores in
-- its smallest allocation (MEMORY USAGE 120 bytes with a 31-character key; MemoryUsageIT).

local B36 = "0123456789abcdefghijklmnopqrstuvwxyz"
local B36_LONG_MAX = "1y2p0ij32e8e7"
local TWO_32 = 4294967296

--- The integer of base-36 digits (matched by [0-9a-z]+) and a sign ("-" or ""): exact up to 2^53 (and for every
--- value fmt_b36 wrote); Long.MAX_VALUE is math.huge.
local function b36_value(sign, digits)
  -- Lua 5.1's tonumber(s, 36) is C's strtoul: exact in 64 bits, then rounded to the double, which is the
  -- integer itself whenever fmt_b36 wrote it.
  local x = tonumber(digits, 36)
  if x >= TWO_63 then
    if sign == "-" then
      error("sluice: expected a base-36 integer, got '" .. sign .. digits .. "'")
    end
    return math.huge
  end
  if sign == "-" then
    return -x
  end
  return x
end

-- A stored value of a fingerprint and two or three base-36 integers, each as its sign and its digits.
local INTS_2 = "^([^|]*)|(%-?)([0-9a-z]+)|(%-?)([0-9a-z]+)$"
local INTS_3 = "^([^|]*)|(%-?)([0-9a-z]+)|(%-?)([0-9a-z]+)|(%-?)([0-9a-z]+)$"

--- Reads encode_state: the state (nil when the value has another number of fields: a State record that
--- gained or lost a component) and the fingerprint it was written under.
function sluice.decode_state(value, fields)
  local n = #fields
  if n == 2 or n == 3 then
    -- Two or three integer fields (fixed_window, gcra, token_bucket and others: most decisions): one match
    -- splits the value and checks each field's sign and digits, so arg_b36's own match is not needed, and the
    -- state table is built at its size. A value it does not match takes the general way below, which tells a
    -- value of another number of fields (dropped) from a malformed one (an error).
    local f1, f2, f3 = fields[1], fields[2], fields[3]
    if f1[2] == "int" and f2[2] == "int" then
      if n == 2 then
        local fingerprint, s1, d1, s2, d2 = string.match(value, INTS_2)
        if fingerprint ~= nil then
          return { [f1[1]] = b36_value(s1, d1), [f2[1]] = b36_value(s2, d2) }, fingerprint
        end
      elseif f3[2] == "int" then
        local fingerprint, s1, d1, s2, d2, s3, d3 = string.match(value, INTS_3)
        if fingerprint ~= nil then
          return { [f1[1]] = b36_value(s1, d1), [f2[1]] = b36_value(s2, d2), [f3[1]] = b36_value(s3, d3) },
              fingerprint
        end
      end
    end
  end
  return sluice.decode_fields(value, fields)
end

--- GET of a state's key: its value (nil when there is none) and whether the key exists at all. A key of
--- another type (a state of the hash layout of earlier versions) exists without a value: the dispatcher drops
--- it explicitly. Shared by load_value and the modules with their own load (sliding_log).
function sluice.get_value(key)
  local value = redis.pcall("GET", key)
  if type(value) == "table" and value.err then
    if string.find(value.err, "WRONGTYPE", 1, true) then
      return nil, true
    end
    error(value.err)
  end
  if not value then
    return nil, false
  end
  return value, true
end

--- Reads a state stored by save_value. Returns the state (nil when absent or unreadable), the fingerprint it
--- was written under (nil when absent) and whether the key existed at all (see get_value).
function sluice.load_value(key, fields)
  local value, exists = sluice.get_value(key)
  if value == nil then
    return nil, nil, exists
  end
  local state, fingerprint = sluice.decode_state(value, fields)
  return state, fingerprint, true
end

-- ------------------------------------------------------------------------------------------ time

--- Redis server time in microseconds: seconds * 10^6 + micros (about 1.8e15 today, exact).
function sluice.server_now()
  local t = redis.call("TIME")
  -- Lua's arithmetic reads the two decimal strings itself: no call into C (tonumber converts twice).
  return t[1] * 1000000 + t[2]
end

-- ------------------------------------------------------------------------------------------ limits

--- A limit's stored state as its current version reads it at now: what rule.lua and sync.lua both do when
--- they open a limit. Under the current fingerprint the state is used as it is; under the fingerprint of a
--- previous version the client knows (known: fingerprint -> parameter words, or nil) it is migrated from that
--- version's parameters, or dropped when it had already expired under them; under any other fingerprint
--- (another algorithm, a version this client never saw, a record that changed shape) it is dropped: reset
--- explicitly, never misread. An expired state reads as no state. Returns the state and whether the key must
--- be written back even when nothing else changes it (a migrated or dropped state). An expired state is not
--- marked: like the in-memory store, the key is left to its TTL, so a clock that steps back finds it.
function sluice.settle(alg, p, fingerprint, state, stored, exists, known, now)
  local dirty = exists and state == nil
  if state ~= nil and stored ~= fingerprint then
    local words = nil
    if known ~= nil and stored ~= nil then
      words = known[stored]
    end
    if words == nil then
      state = nil
    else
      local previous = alg.parse(sluice.words(words))
      if now >= alg.expiresAt(state, previous) then
        state = nil
      else
        state = alg.migrate(state, previous, now, p)
      end
    end
    dirty = true
  end
  if state ~= nil and now >= alg.expiresAt(state, p) then
    state = nil
  end
  return state, dirty
end

--- The instant a call decides at, from its time argument (rule.lua's ARGV[4], sync.lua's ARGV[1]): "" for Redis
--- server TIME, else the client's "now,slackMs" ("now" alone: a slack of 1000 ms). Returns now, whether it is
--- client time, and the TTL slack in milliseconds (0 with server time).
function sluice.call_time(arg)
  if arg == "" then
    return sluice.server_now(), false, 0
  end
  local comma = string.find(arg, ",", 1, true)
  if comma then
    return sluice.arg_int(string.sub(arg, 1, comma - 1)), true, sluice.arg_int(string.sub(arg, comma + 1))
  end
  return sluice.arg_int(arg), true, 1000
end

-- ------------------------------------------------------------------------------------------ built on first use

-- The helpers only some algorithms use (exact products and saturating sums), only writes use (encoding a state,
-- expiries) or only a few parameters use, are defined the first time a call reads them from sluice: a call
-- that never needs them (a token-bucket or GCRA rejection needs none) does not build their closures, about
-- 1,000 instructions each. The first read of one name of a group defines the whole group; sluice.<name> is
-- then an ordinary field.
setmetatable(sluice, { __index = function(helpers, name)
  if name == "floor_mod" or name == "add_sat" or name == "mul_sat" or name == "time_plus" then
    --- a mod b with the sign of b (Java's Math.floorMod), exact: math.fmod is exact for doubles.
    function sluice.floor_mod(a, b)
      local r = math.fmod(a, b)
      if r < 0 then
        r = r + b
      end
      return r
    end

    --- Java's Arith.addSat for integers a, b in [-2^53, 2^53] (or one of them +-math.huge, Java's saturated values):
    --- exact when the sum is in [-2^53, 2^53]. Beyond that no double is exact; the result is then a double beyond the
    --- same bound and never the bound itself (2^53 + 1 would round to 2^53, ties to even), so it compares with any
    --- exact bound within the clock as the true sum does. From 2^63 on (Java saturates) it is math.huge.
    function sluice.add_sat(a, b)
      local r = a + b
      if r >= TWO_63 then
        return math.huge
      elseif r <= -TWO_63 then
        return -math.huge
      elseif r == TWO_53 and TWO_53 - a ~= b then
        return TWO_53 + 2
      elseif r == -TWO_53 and -TWO_53 - a ~= b then
        return -TWO_53 - 2
      end
      return r
    end

    --- Java's Arith.mulSat for integers a, b in [0, 2^53] (or math.huge), with add_sat's guarantees: exact up to
    --- 2^53, beyond it a double beyond 2^53 (never 2^53 itself), math.huge from 2^63 on.
    function sluice.mul_sat(a, b)
      if a == 0 or b == 0 then
        return 0
      end
      local r = a * b
      if r >= TWO_63 then
        return math.huge
      end
      -- A product that rounds to 2^53 is either exactly 2^53 (a is then a power of two and b = 2^53 / a, both
      -- exact) or 2^53 + 1, rounded down by ties to even.
      if r == TWO_53 and not (math.fmod(TWO_53, a) == 0 and TWO_53 / a == b) then
        return TWO_53 + 2
      end
      return r
    end

    --- t + d for a time t in [0, 2^53] and an integer d with |d| <= 2^53 (Java's plain t + d): exact when the sum is
    --- at most 2^53. A larger sum (an expiry past MAX_TIME) rounds, and could round down to 2^53 itself, which a
    --- store's now may equal; it is then 2^53 + 2, so a sum above 2^53 always compares right with every time a store
    --- passes. (The sign of (t - 2^53) + d is right even where that sum rounds: both terms are exact, and rounding
    --- never takes a non-zero integer to 0 or across it.)
    function sluice.time_plus(t, d)
      local s = t + d
      if s <= TWO_53 and (t - TWO_53) + d > 0 then
        s = TWO_53 + 2
      end
      return s
    end
  elseif name == "mul_div_floor" or name == "mul_div_ceil" then
    --- The base-2^24 digits of an integer 0 <= a <= 2^53, least significant first.
    local function limbs(a)
      local l0 = math.fmod(a, 16777216)
      local rest = (a - l0) / 16777216
      local l1 = math.fmod(rest, 16777216)
      return { l0, l1, (rest - l1) / 16777216 }
    end

    --- floor(a * b / c) and whether it has a remainder, for integers a, b in [0, 2^53] and c in [1, 2^52].
    --- The quotient is exact up to 2^53. Above it a double may not hold it: the result is then above 2^53 too
    --- (math.huge from 2^63, where Java saturates at Long.MAX_VALUE), never 2^53 itself, so it still compares right
    --- against any bound up to 2^53, with < and <= alike -- which is all an algorithm may compare it with.
    --- Products below 2^53 take the fast path.
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
      local q, r, rounded = 0, 0, false
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
            -- From 2^53 on, q + 1 may round (to even: 2^53 + 1 becomes 2^53).
            rounded = rounded or q >= TWO_53
            q = q + 1
          end
        end
      end
      if rounded then
        -- The true quotient is above 2^53: keep the result above it too (2^53 + 1 must not compare as 2^53).
        q = math.max(q, TWO_53 + 2)
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
        if q >= TWO_53 then
          -- q + 1 may round back to q: keep a ceiling of 2^53 + 1 or more above 2^53 (see mul_div).
          q = math.max(q + 1, TWO_53 + 2)
        else
          q = q + 1
        end
      end
      return q
    end
  elseif name == "arg_num" or name == "arg_bool" or name == "fmt_num" then
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

    --- A double as a string that reads back as the same double.
    function sluice.fmt_num(x)
      return string.format("%.17g", x)
    end
  elseif name == "arg_b36" or name == "decode_fields" then
    --- Reads fmt_b36: exact up to 2^53 (and for every value fmt_b36 wrote); Long.MAX_VALUE is math.huge.
    function sluice.arg_b36(s)
      local sign, digits = string.match(s, "^(%-?)([0-9a-z]+)$")
      if digits == nil then
        error("sluice: expected a base-36 integer, got '" .. tostring(s) .. "'")
      end
      return b36_value(sign, digits)
    end

    local function decode(kind, s)
      if kind == "int" then
        return sluice.arg_b36(s)
      elseif kind == "num" then
        return sluice.arg_num(s)
      elseif kind == "ints" then
        -- A log can hold thousands of integers: one C call to find each and one to read it, as arg_b36 does, and a
        -- check that nothing but the integers and one comma between each two was skipped.
        local out, k, length = {}, 0, 0
        for sign, digits in string.gmatch(s, "(%-?)([0-9a-z]+)") do
          local x = tonumber(digits, 36)
          if x >= TWO_63 then
            if sign == "-" then
              error("sluice: expected a base-36 integer, got '" .. sign .. digits .. "'")
            end
            x = math.huge
          elseif sign == "-" then
            x = -x
          end
          k = k + 1
          out[k] = x
          length = length + #sign + #digits
        end
        local _, commas = string.gsub(s, ",", ",")
        if (k == 0 and s ~= "") or (k > 0 and (commas ~= k - 1 or length + commas ~= #s)) then
          error("sluice: expected base-36 integers separated by commas, got '" .. s .. "'")
        end
        return out
      end
      error("sluice: unknown field kind '" .. tostring(kind) .. "'")
    end

    --- The pieces of s between the separators sep (a plain string), empty pieces included.
    local function split(s, sep)
      local out = {}
      local from = 1
      while true do
        local at = string.find(s, sep, from, true)
        if at == nil then
          out[#out + 1] = string.sub(s, from)
          return out
        end
        out[#out + 1] = string.sub(s, from, at - 1)
        from = at + 1
      end
    end

    -- The pattern that splits a stored value of a fingerprint and n fields (1 to 4) in ONE string.match call.
    local function fields_pattern(n)
      if n == 1 then
        return "^([^|]*)|([^|]*)$"
      elseif n == 2 then
        return "^([^|]*)|([^|]*)|([^|]*)$"
      elseif n == 3 then
        return "^([^|]*)|([^|]*)|([^|]*)|([^|]*)$"
      elseif n == 4 then
        return "^([^|]*)|([^|]*)|([^|]*)|([^|]*)|([^|]*)$"
      end
      return nil
    end

    --- decode_state for any fields: the state (nil when the value has another number of fields) and its fingerprint.
    function sluice.decode_fields(value, fields)
      local n = #fields
      local parts
      local pattern = fields_pattern(n)
      if pattern ~= nil then
        parts = { string.match(value, pattern) }
        if parts[1] == nil then
          return nil, string.match(value, "^[^|]*")
        end
      else
        parts = split(value, "|")
        if #parts ~= n + 1 then
          return nil, parts[1]
        end
      end
      local state = {}
      for i = 1, n do
        local field = fields[i]
        state[field[1]] = decode(field[2], parts[i + 1])
      end
      return state, parts[1]
    end
  elseif name == "fmt_b36" or name == "fmt_short" or name == "encode_state" or name == "save_value"
      or name == "expire" or name == "store_limit" then
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

    --- A state as the stored string "<fingerprint>|<field>|<field>...", fields in the order of `fields`.
    function sluice.encode_state(state, fields, fingerprint)
      local out = { fingerprint }
      for i = 1, #fields do
        local field = fields[i]
        out[i + 1] = encode(field[2], state[field[1]])
      end
      return table.concat(out, "|")
    end

    --- Writes a state as load_value reads it (replacing a value of any type). The caller (rule.lua) sets the
    --- key's expiry right after.
    function sluice.save_value(key, state, fields, fingerprint)
      redis.call("SET", key, sluice.encode_state(state, fields, fingerprint))
    end

    --- Gives key the expiry expiresAt (microseconds, in the time base of now). With server time that is an
    --- absolute PEXPIREAT, rounded up to the millisecond: exact. With client time the two clocks differ, so the
    --- key lives the remaining duration counted on the server's clock, plus slack_ms (sent by the client with its
    --- time; RedisStore.Builder.clientTimeSlack) for clocks that do not run at the server's pace (a test's frozen
    --- manual clock, a replay's virtual clock). Decisions never depend on it while a key outlives its state:
    --- rule.lua drops a state at expiresAt by the client's clock whatever the key's TTL.
    function sluice.expire(key, expiresAt, now, client_time, slack_ms)
      if expiresAt > TWO_53 then
        -- No clock reading passes MAX_TIME (2^53), so a state that expires later, or never (math.huge, Java's
        -- Long.MAX_VALUE: a token bucket refilling 10^12 tokens at one a day) lives until then: the key still
        -- gets a TTL, no longer than any decision can need it.
        expiresAt = TWO_53
      end
      if client_time then
        local ms = sluice.ceil_div(expiresAt - now, 1000) + slack_ms
        redis.call("PEXPIRE", key, sluice.fmt_int(ms))
      else
        redis.call("PEXPIREAT", key, sluice.fmt_int(sluice.ceil_div(expiresAt, 1000)))
      end
    end

    --- Writes a limit's next state with its expiry, or deletes its key when there is nothing left to remember.
    function sluice.store_limit(limit, state, now, client_time, slack_ms)
      local expiresAt = nil
      if state ~= nil then
        expiresAt = limit.alg.expiresAt(state, limit.p)
      end
      if state == nil or expiresAt <= now then
        redis.call("DEL", limit.key)
        return
      end
      if limit.alg.save then
        limit.alg.save(limit.key, state, limit.p, limit.fingerprint)
      else
        sluice.save_value(limit.key, state, limit.alg.fields, limit.fingerprint)
      end
      sluice.expire(limit.key, expiresAt, now, client_time, slack_ms)
    end
  else
    return nil
  end
  return rawget(helpers, name)
end })
