-- lib/state_int.lua: a state stored as ONE decimal integer (docs/redis-script-protocol.md, "A state of one
-- integer"). Built on first use (see core.lua): only calls on a module with M.to_int (gcra) read or write it.
--
--   <x><ddd>      e.g. 1767225612345678042   (gcra: TAT 1767225612345678 µs, fingerprint digits 042)
--
-- x is the module's integer (1 <= x <= 2^53: exact in a double, and x * 1000 + 999 < 2^63), ddd the three
-- fingerprint digits of the version that wrote it (fp_digits). Redis keeps a value that reads as a 64-bit integer
-- inside its 16-byte object (OBJ_ENCODING_INT) instead of a 32- to 48-byte string: 32 B less per key
-- (docs/redis-memory.md). The cost is the fingerprint: 1,000 values instead of 2^36, so two versions of a limit
-- share digits with probability 1/1000, and a state of a version the call does not know is then used as the
-- current one's instead of being dropped (stored_version; gcra.lua says what that does).
--
-- The number itself passes 2^53, so it is never a Lua number: x is formatted and the digits appended as text,
-- and read back by splitting the text before tonumber.

-- The three digits of each fingerprint computed lately (only with sluice.keeps: a functions library keeps them;
-- with EVALSHA nothing outlives the call, so nothing is kept). Bounded like sluice.params.
local FP_DIGITS, fp_digits_count, FP_DIGITS_MAX = nil, 0, 256

-- The value of a base64url character's code: A-Z 0-25, a-z 26-51, 0-9 52-61, '-' 62, '_' 63.
local function sextet(c)
  if c == 95 then
    return 63
  elseif c >= 97 then
    return c - 71
  elseif c >= 65 then
    return c - 65
  elseif c >= 48 then
    return c + 4
  end
  return 62
end

--- The fingerprint's 36 bits (6 base64url characters, LimitParams.fingerprint) modulo 1000 as three decimal
--- digits, e.g. "042" (StoredState.fingerprintDigits in the tests is the Java twin).
function sluice.fp_digits(fingerprint)
  if FP_DIGITS ~= nil then
    local known = FP_DIGITS[fingerprint]
    if known ~= nil then
      return known
    end
  end
  local c1, c2, c3, c4, c5, c6 = string.byte(fingerprint, 1, 6)
  if c6 == nil or #fingerprint ~= 6 then
    error("sluice: expected a fingerprint of 6 base64url characters, got '" .. tostring(fingerprint) .. "'")
  end
  local bits = ((((sextet(c1) * 64 + sextet(c2)) * 64 + sextet(c3)) * 64 + sextet(c4)) * 64 + sextet(c5)) * 64
      + sextet(c6)                                         -- below 2^36: exact
  local digits = string.format("%03d", bits % 1000)
  if sluice.keeps then
    if FP_DIGITS == nil or fp_digits_count >= FP_DIGITS_MAX then
      FP_DIGITS, fp_digits_count = {}, 0
    end
    FP_DIGITS[fingerprint] = digits
    fp_digits_count = fp_digits_count + 1
  end
  return digits
end

--- The stored text of integer x (1 <= x <= 2^53) under fingerprint.
function sluice.encode_int(x, fingerprint)
  return string.format("%d", x) .. sluice.fp_digits(fingerprint)
end

--- Reads encode_int: x and the three fingerprint digits, or nil for a value of another form (a string state has
--- a '|', so no value is both).
function sluice.decode_int(value)
  local x, digits = string.match(value, "^([1-9]%d*)(%d%d%d)$")
  if x == nil or #x > 16 then
    return nil
  end
  return tonumber(x), digits
end

--- The fingerprint a state read by decode_int was written under, as sluice.settle compares it: the current
--- fingerprint when its digits are the stored ones, else a previous version's the call knows (known:
--- fingerprint -> words, or nil) with those digits, else the digits themselves (no fingerprint equals them:
--- the state is dropped). Two versions with the same digits are indistinguishable: the first found is taken.
function sluice.stored_version(digits, fingerprint, known)
  if sluice.fp_digits(fingerprint) == digits then
    return fingerprint
  end
  if known ~= nil then
    for previous in pairs(known) do
      if sluice.fp_digits(previous) == digits then
        return previous
      end
    end
  end
  return digits
end
