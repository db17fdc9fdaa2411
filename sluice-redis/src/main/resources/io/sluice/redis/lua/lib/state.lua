-- lib/state.lua: reading a limit's stored state (docs/redis-script-protocol.md, "State storage"), including a
-- state of one integer (decode_int; state_int.lua writes it). Writing it is
-- state_write.lua, and states that are not two or three integers are read by state_decode.lua, both built on
-- first use; they use this file's locals (B36, B36_LONG_MAX, TWO_32, b36_value), which their branches of the
-- loader see as upvalues.
--

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

-- The states of two or three integers decoded lately: DECODED[fields][value] = state, DECODED_FP[value] = its
-- fingerprint. A hot key's rejections write nothing, so call after call reads the very value the last one read;
-- in a functions library (FCALL, sluice.keeps) these tables outlive the call, so such a call reads its state
-- without splitting and converting it again. Safe to share because no port ever writes to a state table (a
-- changed state is a new table: the dispatcher knows what to write by identity), and a value always decodes to
-- the same fields; bounded like sluice.params (it starts again empty past DECODED_MAX values). With EVALSHA
-- nothing outlives the call, so nothing is kept.
local DECODED, DECODED_FP, decoded_count, DECODED_MAX = nil, nil, 0, 256

--- Reads encode_state: the state (nil when the value has another number of fields: a State record that
--- gained or lost a component) and the fingerprint it was written under.
function sluice.decode_state(value, fields)
  local n = #fields
  local keeps = sluice.keeps
  local known = nil
  if keeps and DECODED ~= nil then
    known = DECODED[fields]
    if known ~= nil then
      local state = known[value]
      if state ~= nil then
        return state, DECODED_FP[value]
      end
    end
  end
  if n == 2 or n == 3 then
    -- Two or three integer fields (fixed_window, gcra, token_bucket and others: most decisions): one match
    -- splits the value and checks each field's sign and digits, so arg_b36's own match is not needed, and the
    -- state table is built at its size. A value it does not match takes the general way below, which tells a
    -- value of another number of fields (dropped) from a malformed one (an error).
    local f1, f2, f3 = fields[1], fields[2], fields[3]
    if f1[2] == "int" and f2[2] == "int" then
      local state, fingerprint = nil, nil
      if n == 2 then
        local s1, d1, s2, d2
        fingerprint, s1, d1, s2, d2 = string.match(value, INTS_2)
        if fingerprint ~= nil then
          state = { [f1[1]] = b36_value(s1, d1), [f2[1]] = b36_value(s2, d2) }
        end
      elseif f3[2] == "int" then
        local s1, d1, s2, d2, s3, d3
        fingerprint, s1, d1, s2, d2, s3, d3 = string.match(value, INTS_3)
        if fingerprint ~= nil then
          state = { [f1[1]] = b36_value(s1, d1), [f2[1]] = b36_value(s2, d2), [f3[1]] = b36_value(s3, d3) }
        end
      end
      if state ~= nil and not keeps then
        return state, fingerprint
      elseif state ~= nil then
        if DECODED == nil or decoded_count >= DECODED_MAX then
          DECODED, DECODED_FP, decoded_count, known = {}, {}, 0, nil
        end
        if known == nil then
          known = {}
          DECODED[fields] = known
        end
        known[value] = state
        DECODED_FP[value] = fingerprint
        decoded_count = decoded_count + 1
        return state, fingerprint
      end
    end
  end
  return sluice.decode_fields(value, fields)
end

-- The states of one integer decoded lately (decode_int), with sluice.keeps only: INT_STATES[value] = { state,
-- fingerprint, p }, the state decode_int returned for that value under that fingerprint and those parsed
-- parameters (sluice.params keeps one table per version). Bounded like DECODED.
local INT_STATES, int_states_count = nil, 0

--- Reads a state of ONE integer (lib/state_int.lua's encode_int: "<x><ddd>"): the module's state from_int(x, p)
--- and the fingerprint it was written under, the current `fingerprint` when ddd are its digits (fp_number, here
--- inline), else the three digits (sluice.settle names their version, sluice.stored_version). nil for a value of
--- another form: a string state holds a '|', so no value is both.
function sluice.decode_int(value, fingerprint, p, from_int)
  if INT_STATES ~= nil then
    local kept = INT_STATES[value]
    if kept ~= nil and kept[2] == fingerprint and kept[3] == p then
      return kept[1], fingerprint
    end
  end
  local x = string.match(value, "^([1-9]%d*)%d%d%d$")
  if x == nil or #x > 16 then
    return nil
  end
  local state = from_int(tonumber(x), p)
  local d1, d2, d3 = string.byte(value, -3, -1)
  local c1, c2, c3, c4, c5, c6 = string.byte(fingerprint, 1, 6)
  if c6 == nil then
    error("sluice: expected a fingerprint of 6 characters, got '" .. tostring(fingerprint) .. "'")
  end
  local mine = (((((c1 * 131 + c2) * 131 + c3) * 131 + c4) * 131 + c5) * 131 + c6) % 1000
  if d1 * 100 + d2 * 10 + d3 - 5328 ~= mine then          -- 5328 = 111 * string.byte("0")
    return state, string.sub(value, -3)
  end
  if sluice.keeps then
    if INT_STATES == nil or int_states_count >= DECODED_MAX then
      INT_STATES, int_states_count = {}, 0
    end
    INT_STATES[value] = { state, fingerprint, p }
    int_states_count = int_states_count + 1
  end
  return state, fingerprint
end

--- GET of a state's key: its value (nil when there is none) and whether the key exists at all. A key of
--- another type (a state of the hash layout of earlier versions) exists without a value: the dispatcher drops
--- it explicitly. Shared by load_value and the modules with their own load (sliding_log).
function sluice.get_value(key)
  local value = redis.pcall("GET", key)
  if not value then
    return nil, false
  end
  -- pcall answers a string, false, or an error table { err = ... }. A string's field reads as nil (its metatable's
  -- __index is the string library, which has no "err"): no call into C (type) on every load.
  local err = value.err
  if err then
    if string.find(err, "WRONGTYPE", 1, true) then
      return nil, true
    end
    error(err)
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
