-- lib/core.lua: the first library of every script (docs/redis-script-protocol.md, "One script"). It creates the two
-- tables every later file uses, and the helpers for arguments and replies that every call needs:
--   sluice  the helpers, one field each, added by the lib/*.lua files in the order SluiceScript appends them
--   ALG     the registry: each algorithms/<name>.lua adds ALG["<name>"] = <module> when sluice.algorithm(name)
--           first runs it in a call
-- Redis forbids creating globals, so both are locals of the script's one chunk, visible to every file after
-- this one. The libraries and what they hold, each named after the Java it ports where there is one:
--   core.lua           arg_int, words, fmt_int: ARGV words in, reply values out
--   arith.lua          floor_div, ceil_div (Java's Math.floorDiv, Arith.ceilDiv)
--   verdict.lua        allow, reject (Java's Step.allow / Step.reject)
--   state.lua          reading a stored state: decode_state, decode_int, get_value, load_value
--   clock.lua          server_now, call_time: the instant a call decides at
--   limit.lua          settle, params: a limit's state as its current version reads it, its parsed parameters
-- and, built on first use (below), the groups most calls never need:
--   arith_sat.lua      floor_mod, add_sat, mul_sat, time_plus (Arith's saturating sums and products)
--   arith_mul_div.lua  mul_div_floor, mul_div_ceil (Arith.mulDivFloor / mulDivCeil)
--   doubles.lua        arg_num, arg_bool, fmt_num (Guava's algorithms keep doubles)
--   state_decode.lua   arg_b36, decode_fields (states that are not two or three integers)
--   state_write.lua    fmt_b36, fmt_short, encode_state, save_value, ttl, expire, store_limit, store_state (every write)
--   state_int.lua      fp_number, fp_digits, encode_int, stored_version (writing a state of one integer, gcra's)
--
-- Built on first use. The files of the second list are not run at the top level: SluiceScript wraps each in one
-- branch of the __index function of sluice's metatable, entered the first time a call reads one of the names the
-- file defines (function sluice.<name>), which defines the whole file's group; sluice.<name> is then an
-- ordinary field. A token-bucket or GCRA rejection builds none of them.
--
-- Cost. Redis runs the whole chunk on every call, and nothing survives a call (globals and the standard
-- tables are read-only), so everything here is built again for every decision: each `function` statement
-- allocates a closure, each table constructor a table. On Redis 7.0, counted with callgrind, a closure costs
-- about 500 machine instructions, a table about 2,000, a call into C (string.*, math.*, tonumber, redis.call)
-- about 800 before it does anything, and a string that is not already interned an allocation and a hash; a
-- whole token-bucket decision is about 270,000. So the eager libraries define only what calls need, and the helpers on
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

-- sluice is built with a slot for every helper defined unconditionally below, so defining them never grows
-- (rehashes) the table: that costs a few thousand instructions per call otherwise (the eager libraries add only
-- these; the groups built on first use add theirs, see above).
local sluice = { FOREVER = false, algorithm = false, arg_int = false, words = false, fmt_int = false,
                 floor_div = false, ceil_div = false, allow = false, reject = false,
                 decode_state = false, decode_int = false, get_value = false, load_value = false, server_now = false, settle = false,
                 call_time = false, params = false, keeps = false }
local ALG = {}

-- Whether the helpers' tables outlive the call: false in a script (EVALSHA runs this chunk on every call); the
-- functions library's wrapper (SluiceScript.functionLibrary) sets it once it has built the helpers, which it keeps.
-- sluice.params and decode_state keep what they computed only then.
sluice.keeps = false

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
