-- lib/state_decode.lua: reading any stored state (state.lua reads the commonest, two or three integers, itself).
-- Built on first use (see core.lua): not run at the top level. Uses state.lua's locals.

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
