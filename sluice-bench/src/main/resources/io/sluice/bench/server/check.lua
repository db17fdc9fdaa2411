-- check.lua: the wrk script of sluice bench's server suite (io.sluice.bench.server.Wrk).
--   wrk -s check.lua URL -- RULE KEYS PREFIX
-- POSTs {"rule": RULE, "key": ...} to /v1/check: one key (PREFIX itself) when KEYS is 1, else PREFIX:0 ..
-- PREFIX:(KEYS - 1) in turn. Counts the answers by status (200 admitted, 429 rejected) and prints one line the
-- suite parses; wrk's own report goes before it. Latencies are in microseconds, as wrk keeps them.
local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  rule, keys, prefix = args[1], tonumber(args[2]), args[3]
  admitted, rejected, other, n = 0, 0, 0, 0
  headers = { ["Content-Type"] = "application/json" }
  if keys == 1 then
    -- One key: the same bytes every time, built once (wrk's cheapest path).
    single = wrk.format("POST", "/v1/check", headers, '{"rule":"' .. rule .. '","key":"' .. prefix .. '"}')
  end
end

function request()
  if single then
    return single
  end
  n = n + 1
  return wrk.format("POST", "/v1/check", headers,
    '{"rule":"' .. rule .. '","key":"' .. prefix .. ':' .. (n % keys) .. '"}')
end

function response(status, headers, body)
  if status == 200 then
    admitted = admitted + 1
  elseif status == 429 then
    rejected = rejected + 1
  else
    other = other + 1
  end
end

function done(summary, latency, requests)
  local a, r, o = 0, 0, 0
  for _, thread in ipairs(threads) do
    a = a + thread:get("admitted")
    r = r + thread:get("rejected")
    o = o + thread:get("other")
  end
  local e = summary.errors
  io.write(string.format(
    "sluice-wrk requests=%d duration_us=%d admitted=%d rejected=%d other=%d p50_us=%d p99_us=%d socket_errors=%d\n",
    summary.requests, summary.duration, a, r, o, latency:percentile(50), latency:percentile(99),
    e.connect + e.read + e.write + e.timeout))
end
