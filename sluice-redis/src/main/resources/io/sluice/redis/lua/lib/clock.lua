-- lib/clock.lua: the instant a call decides at: Redis server TIME, or the client's clock sent as an argument
-- (io.sluice.redis.internal.DecisionScript#now). Setting a key's expiry in that time base is state_write.lua's
-- expire.

--- Redis server time in microseconds: seconds * 10^6 + micros (about 1.8e15 today, exact).
function sluice.server_now()
  local t = redis.call("TIME")
  -- Lua's arithmetic reads the two decimal strings itself: no call into C (tonumber converts twice).
  return t[1] * 1000000 + t[2]
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
