-- lib/arith.lua: exact integer division, as Java's Math.floorDiv and Arith.ceilDiv
-- (io.sluice.internal.algorithm.Arith), for line-by-line ports. The rest of Arith (saturating sums and
-- products, mulDivFloor / mulDivCeil) is in arith_sat.lua and arith_mul_div.lua, built on first use (see core.lua).
--
-- Numbers (continued from core.lua):
--   4. A product (a count times a duration) or a sum (a time plus a window) can pass 2^53 and silently round.
--      sluice.mul_div_floor / mul_div_ceil compute floor(a * b / c) exactly, as Java's Arith.mulDivFloor /
--      mulDivCeil do; write sums as differences (t - start < window, not t < start + window).
-- Division is safe: for integers 0 <= a <= 2^53 and b > 0, math.floor(a / b) and a % b are exact. (A non-integer
-- quotient is at least 1/b away from the next integer, and half its ulp is at most 1/b, equal only when b is
-- a power of two and the division exact, so rounding never reaches the integer; LuaLibrariesIT checks it.)
-- sluice.floor_div / floor_mod / ceil_div name Java's Math.floorDiv / floorMod / Arith.ceilDiv for
-- line-by-line ports, and use math.fmod, exact for any doubles.
-- tonumber on a stored decimal string is exact for integers up to 2^53, and for doubles written with %.17g;
-- states are stored in base 36 (sluice.fmt_b36 / arg_b36, exact the same way).

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
