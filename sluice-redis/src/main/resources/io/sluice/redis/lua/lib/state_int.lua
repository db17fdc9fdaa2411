-- lib/state_int.lua: writing a state as ONE decimal integer, and naming the version of one read back
-- (docs/redis-script-protocol.md, "A state of one integer"). Built on first use (see core.lua): only writes of a
-- module with M.to_int (gcra) and parameter changes need it; reading is state.lua's decode_int.
--
--   <x><ddd>      e.g. 1767225612345678042   (gcra: TAT 1767225612345678 µs, fingerprint digits 042)
--
-- x is the module's integer (1 <= x <= 2^53: exact in a double, and x * 1000 + 999 < 2^63), ddd the three
-- fingerprint digits of the version that wrote it (fp_digits). Redis keeps a value that reads as a 64-bit integer
-- inside its 16-byte object (OBJ_ENCODING_INT) instead of a 32- to 48-byte string: 32 B less per key
-- (docs/redis-memory.md). The cost is the fingerprint: 1,000 values instead of 2^36, so two versions of a limit
-- share digits with probability about 1/1000, and a state of a version the call does not know is then used as
-- the current one's instead of being dropped (stored_version; gcra.lua says what that does).
--
-- The number itself passes 2^53, so it is never a Lua number: x is formatted and the digits appended as text,
-- and read back by splitting the text before tonumber.

--- The three digits of a fingerprint as a number, 0 to 999: its 6 character codes read as the digits of a
--- base-131 number (below 2^43: exact), modulo 1000. A cheap hash of an already random string, with no
--- per-character mapping (StoredState.fingerprintDigits in the tests is the Java twin); state.lua's decode_int
--- computes the same inline.
function sluice.fp_number(fingerprint)
  local c1, c2, c3, c4, c5, c6 = string.byte(fingerprint, 1, 6)
  if c6 == nil then
    error("sluice: expected a fingerprint of 6 characters, got '" .. tostring(fingerprint) .. "'")
  end
  return (((((c1 * 131 + c2) * 131 + c3) * 131 + c4) * 131 + c5) * 131 + c6) % 1000
end

--- The three digits of a fingerprint as the value holds them, e.g. "042".
function sluice.fp_digits(fingerprint)
  return string.format("%03d", sluice.fp_number(fingerprint))
end

--- The stored text of integer x (1 <= x <= 2^53) under fingerprint.
function sluice.encode_int(x, fingerprint)
  return string.format("%d%03d", x, sluice.fp_number(fingerprint))
end

--- The fingerprint of a state decode_int read with digits other than the current fingerprint's, as
--- sluice.settle compares it: a previous version's the call knows (known: fingerprint -> words, or nil) with
--- those digits, else the digits themselves (no fingerprint equals them: the state is dropped). Two known
--- versions with the same digits are indistinguishable: the first found is taken.
function sluice.stored_version(digits, known)
  if known ~= nil then
    for previous in pairs(known) do
      if sluice.fp_digits(previous) == digits then
        return previous
      end
    end
  end
  return digits
end
