-- lib/doubles.lua: double and boolean arguments, and doubles as text (Guava's algorithms, smooth_bursty and
-- smooth_warming_up, keep doubles). Built on first use (see core.lua): not run at the top level.

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
