-- lib/arith_mul_div.lua: floor(a * b / c) and ceil(a * b / c) exactly, as Java's Arith.mulDivFloor / mulDivCeil,
-- for the algorithms whose Java uses them. Built on first use (see core.lua): not run at the top level.

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
