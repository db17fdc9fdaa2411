-- lib/arith_sat.lua: Java's Math.floorMod and Arith.addSat / mulSat and a time plus a duration, for the algorithms
-- whose Java uses them. Built on first use (see core.lua): not run at the top level.

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
