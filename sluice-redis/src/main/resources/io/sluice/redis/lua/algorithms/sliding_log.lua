-- algorithms/sliding_log.lua: port of io.sluice.internal.algorithm.SlidingLogAlgorithm.
-- The model, the invariants and the worked example are in the Java class's essay; M.step and the helpers it
-- calls follow the Java methods one for one. Module shape: docs/redis-script-protocol.md.
--
-- Parameters (SlidingLog's record components after the name): limit, window (micros), minGap (micros),
-- countRejected ("1" | "0").
-- State (SlidingLogAlgorithm.State): log, the pairs (time, permits), oldest first, times strictly increasing,
-- permits >= 1.
--
-- Storage: the default layout, "<fingerprint>|<log>" with the log's integers in base 36 joined by ',' (field kind
-- "ints", lib/state.lua), byte for byte. What differs is how this module reads and writes it (M.load, M.save).
--
-- Why not a Lua list. A log holds up to limit = 10^6 entries; a decision reads all of them (the count) but changes
-- only its ends: it drops the entries that left the window from the front, appends one entry at now (or adds to
-- the newest when that is at now too) and, past the limit, drops or trims the oldest. Decoding the whole text
-- into a list, copying it and encoding it again cost about 2.4 us per entry in Redis 7.0 (measured with
-- SlidingLogCostProbe: 2.4 ms per decision at 1,000 entries, 12 ms at 5,000, 49 ms at 20,000): an hour at 10
-- requests per second (36,000 decisions, 36,000 entries at the end) took about 26 minutes of Redis CPU.
--
-- So the log here is the stored text itself, in runs: a run is a slice src[a..b] of a string holding whole
-- pairs "t,p,t,p" (the stored value, or one entry this call encoded), with its number of entries and permits.
-- A log is a list of runs, oldest first; every operation of the Java class works on that list:
--   - dropping entries from the front moves a run's a forward, reading only the dropped entries;
--   - appending an entry adds a run of that one entry; adding to the newest entry moves the last run's b back
--     before it and adds the merged entry as a run;
--   - trimming the oldest entry replaces it with a run of the trimmed entry;
--   - the newest entry is read from the last 48 characters of the last run (a pair is at most 11 + 1 + 5).
-- Every entry that survives keeps its encoded text, so the value written (M.save: the runs joined by ',') is what
-- encoding the whole list would write: fmt_b36 is the only encoder, and the stored text came from it too.
--
-- Counting. The one whole-log operation left is the sum of the permits, done once per call when the value is
-- read, in C: string.gsub(value, "[^,]+,1,", "") removes every entry of one permit but the last (the last has
-- no ',' after it) and counts them; what is left, the other entries and the prefix "<fingerprint>|", is read in
-- Lua. Why that is exact for a log this module wrote: gsub tries the pattern at the start of the value and, after
-- a match, where it ended; after a failure, one character further. At the start of an entry "t,p," the pattern
-- matches exactly when p is "1" (the greedy [^,]+ takes t, as no field holds a ','; shorter choices are followed
-- by a digit, not ','), and then ends at the start of the next entry. When p is not "1", every start inside
-- "t,p," fails: from inside t the field after is p; from inside p the field after is the next time, which would
-- have to be "1"; a time of 1 follows another entry only after a time of 0, the first one (times increase from
-- 0), so a log starting at time 0 is read entry by entry instead. So the matches are exactly the one-permit
-- entries but the last, whatever the entries between them, and the prefix is either left whole or, when the
-- first entry has one permit, removed with it (the match from position 1 covers "<fingerprint>|t,1,"; a
-- fingerprint has no ','). That is one pass of C over the text, about 50 ns per entry, against the 2.4 us of
-- decoding and encoding: the hour took 55 s of Redis CPU instead of about 26 minutes, on a loaded machine
-- (docs/redis-memory.md has the figures).
--
-- Arithmetic: times and window are at most 2^53 and counts at most 2 * 10^6, so every value is exact; tonumber
-- (s, 36) reads every integer fmt_b36 writes below 2^53 exactly; the sums time + window of the Java code are
-- written window - (t - time), which is exact, except in expiresAt.
do
  local S = sluice
  local M = {}

  M.fields = { { "log", "ints" } }

  function M.parse(w)
    return {
      limit = S.arg_int(w[1]),
      window = S.arg_int(w[2]),
      minGap = S.arg_int(w[3]),
      countRejected = S.arg_bool(w[4]),
    }
  end

  -- ---------------------------------------------------------------------------------- runs of stored text

  local PAIR = "^([0-9a-z]+),([0-9a-z]+)()"
  local COMMA = 44

  -- Lua only (speed: reads the log from its stored text, see the header).
  local function malformed(s)
    error("sluice: expected base-36 integers separated by commas, got '" .. s .. "'")
  end

  -- Lua only (speed: reads the log from its stored text, see the header).
  local function newRun(src, a, b, n, sum)
    return { src = src, a = a, b = b, n = n, sum = sum }
  end

  -- Lua only (speed: reads the log from its stored text, see the header).
  -- A run of one entry, encoded as the default storage encodes it.
  local function single(t, permits)
    local text = S.fmt_b36(t) .. "," .. S.fmt_b36(permits)
    return newRun(text, 1, #text, 1, permits)
  end

  -- Lua only (speed: reads the log from its stored text, see the header).
  -- The entry starting at position pos of src, which ends at b or before a ',': time, permits, and where the
  -- entry after it starts (b + 2 after the last one).
  local function entryAt(src, pos, b)
    local t, p, e = string.match(src, PAIR, pos)
    if t == nil or e > b + 1 or (e <= b and string.byte(src, e) ~= COMMA) then
      malformed(string.sub(src, pos, math.min(b, pos + 47)))
    end
    return tonumber(t, 36), tonumber(p, 36), e + 1
  end

  -- Lua only (speed: reads the log from its stored text, see the header).
  -- The last entry of run r: time, permits, and where it starts.
  local function lastOf(r)
    local from = r.b - 47
    local t, p
    if from <= r.a then
      local text = string.sub(r.src, r.a, r.b)
      t, p = string.match(text, ",([0-9a-z]+),([0-9a-z]+)$")
      if t == nil then
        t, p = string.match(text, "^([0-9a-z]+),([0-9a-z]+)$")
      end
    else
      t, p = string.match(string.sub(r.src, from, r.b), ",([0-9a-z]+),([0-9a-z]+)$")
    end
    if t == nil then
      malformed(string.sub(r.src, math.max(r.a, from), r.b))
    end
    return tonumber(t, 36), tonumber(p, 36), r.b - #t - #p
  end

  -- Lua only (speed: reads the log from its stored text, see the header).
  -- Entries and permits of the log src[a..], read as the header explains (the prefix src[1..a-1] holds no ',').
  local function count(src, a)
    local rest, ones = src, 0
    local first = string.find(src, ",", a, true)
    local width = first and first - a
    local _, _, lastTime = string.find(string.sub(src, -48), "([0-9a-z]+),[0-9a-z]+$")
    if width ~= nil and width >= 2 and lastTime ~= nil and #lastTime == width then
      -- Times increase and none is negative, so when the oldest and the newest have as many digits, every time
      -- between has too: then ",1," is always width characters after the start of its entry, and width '.'
      -- cost string.gsub less than [^,]+ (no class to test per character), about 20% of the count.
      rest, ones = string.gsub(src, string.rep(".", width) .. ",1,", "")
    elseif string.sub(src, a, a + 1) ~= "0," then
      rest, ones = string.gsub(src, "[^,]+,1,", "")
    end
    local pos = 1
    if string.sub(rest, 1, a - 1) == string.sub(src, 1, a - 1) then
      pos = a
    end
    local n, sum, last = ones, ones, #rest
    if pos > last then
      -- Every entry matched: the text ended with ','.
      malformed(string.sub(src, math.max(a, #src - 47)))
    end
    while pos <= last do
      local _, p, nextPos = entryAt(rest, pos, last)
      n = n + 1
      sum = sum + p
      pos = nextPos
    end
    if pos ~= last + 2 then
      malformed(string.sub(src, math.max(a, #src - 47)))
    end
    return n, sum
  end

  -- ---------------------------------------------------------------------------------- the log

  -- A log: runs (oldest first, none empty), n entries, sum permits. A log read from Redis is counted when first
  -- needed (n == nil until then): a state dropped for its fingerprint, or only asked when it expires, never is.
  -- Shared by every caller: never written to.
  local EMPTY = { runs = {}, n = 0, sum = 0 }

  -- Lua only (speed: reads the log from its stored text, see the header).
  local function newLog(runs, n, sum)
    return { runs = runs, n = n, sum = sum }
  end

  -- Lua only (speed: reads the log from its stored text, see the header).
  local function counted(log)
    if log.n == nil then
      local r = log.runs[1]
      r.n, r.sum = count(r.src, r.a)
      log.n, log.sum = r.n, r.sum
    end
    return log
  end

  -- Lua only (speed: reads the log from its stored text, see the header).
  -- The newest entry: time, permits, and where it starts in the last run (read once per log).
  local function newestEntry(log)
    if log.newestTime == nil then
      log.newestTime, log.newestPermits, log.newestAt = lastOf(log.runs[#log.runs])
    end
    return log.newestTime, log.newestPermits, log.newestAt
  end

  local function newest(log)
    return (newestEntry(log))
  end

  local function total(log)
    return log.sum
  end

  -- Lua only (speed: reads the log from its stored text, see the header).
  -- The log from entry position pos of run i on (pos == runs[i].a: from run i whole), with that run's
  -- remaining entries and permits.
  local function suffix(log, i, pos, n, sum)
    local runs = log.runs
    local out = {}
    local r = runs[i]
    out[1] = newRun(r.src, pos, r.b, n, sum)
    local entries, permits = n, sum
    for j = i + 1, #runs do
      out[#out + 1] = runs[j]
      entries = entries + runs[j].n
      permits = permits + runs[j].sum
    end
    return newLog(out, entries, permits)
  end

  -- A now before the newest entry counts as no time passed.
  local function clock(state, now)
    if state == nil or state.log.n == 0 then
      return now
    end
    return math.max(now, newest(state.log))
  end

  -- The entries in (t - window, t]; t is never before the newest entry.
  local function inWindow(state, t, window)
    if state == nil then
      return EMPTY
    end
    local log = counted(state.log)
    local runs = log.runs
    for i = 1, #runs do
      local r = runs[i]
      local pos, n, sum = r.a, r.n, r.sum
      while pos <= r.b do
        local time, permits, nextPos = entryAt(r.src, pos, r.b)
        if time > t - window then
          if i == 1 and pos == r.a then
            return log
          end
          return suffix(log, i, pos, n, sum)
        end
        pos = nextPos
        n = n - 1
        sum = sum - permits
      end
    end
    return EMPTY
  end

  -- The log with permits more at t, merged into the newest entry when it is at t too.
  local function appended(log, t, permits)
    local runs = {}
    for i = 1, #log.runs do
      runs[i] = log.runs[i]
    end
    local out
    if log.n > 0 and newest(log) == t then
      local _, newestPermits, at = newestEntry(log)
      local r = runs[#runs]
      if r.n == 1 then
        runs[#runs] = single(t, newestPermits + permits)
      else
        -- The run without its last entry, which ends 2 characters before it (its ',' in between).
        runs[#runs] = newRun(r.src, r.a, at - 2, r.n - 1, r.sum - newestPermits)
        runs[#runs + 1] = single(t, newestPermits + permits)
      end
      out = newLog(runs, log.n, log.sum + permits)
      out.newestTime, out.newestPermits, out.newestAt = t, newestPermits + permits, 1
    else
      runs[#runs + 1] = single(t, permits)
      out = newLog(runs, log.n + 1, log.sum + permits)
      out.newestTime, out.newestPermits, out.newestAt = t, permits, 1
    end
    return out
  end

  -- Drops the oldest permits beyond the newest limit; see the essay for why that is invisible.
  local function capped(log, p)
    local excess = total(log) - p.limit
    if excess <= 0 then
      return log
    end
    local runs = log.runs
    for i = 1, #runs do
      local r = runs[i]
      local pos, n, sum = r.a, r.n, r.sum
      while pos <= r.b do
        local time, permits, nextPos = entryAt(r.src, pos, r.b)
        if permits > excess then
          -- This entry is kept, minus the excess (kept[2] = kept[2] - excess in the Java code).
          local kept
          if nextPos <= r.b then
            kept = suffix(log, i, nextPos, n - 1, sum - permits)
          elseif i < #runs then
            kept = suffix(log, i + 1, runs[i + 1].a, runs[i + 1].n, runs[i + 1].sum)
          else
            kept = newLog({}, 0, 0)
          end
          table.insert(kept.runs, 1, single(time, permits - excess))
          kept.n = kept.n + 1
          kept.sum = kept.sum + permits - excess
          if kept.n == 1 then
            kept.newestTime, kept.newestPermits, kept.newestAt = time, permits - excess, 1
          end
          return kept
        end
        excess = excess - permits
        pos = nextPos
        n = n - 1
        sum = sum - permits
      end
    end
    -- Not reached: the permits walked add up to total(log) = limit + excess > excess, so some entry is kept.
    error("sluice: sliding_log cap dropped the whole log")
  end

  local function gapOver(log, t, p)
    return p.minGap == 0 or log.n == 0 or t - newest(log) >= p.minGap
  end

  local function resetAfter(log, t, p)
    if log.n == 0 then
      return 0
    end
    return p.window - (t - newest(log))
  end

  local function remaining(inLog, p)
    return math.max(0, p.limit - inLog)
  end

  -- The smallest wait after which permits pass against log if nothing else happens.
  local function retryAfter(log, t, permits, p)
    local wait = 0
    local excess = total(log) + permits - p.limit
    local seen = 0
    local runs = log.runs
    local i = 1
    while i <= #runs and excess > 0 do
      local r = runs[i]
      local pos = r.a
      while pos <= r.b do
        local time, n, nextPos = entryAt(r.src, pos, r.b)
        seen = seen + n
        if seen >= excess then
          wait = p.window - (t - time)
          break
        end
        pos = nextPos
      end
      if seen >= excess then
        break
      end
      i = i + 1
    end
    if p.minGap > 0 and log.n > 0 then
      wait = math.max(wait, p.minGap - (t - newest(log)))
    end
    return wait
  end

  function M.step(state, now, permits, maxWaitMicros, p)
    local t = clock(state, now)
    local log = inWindow(state, t, p.window)
    local count = total(log)
    local recorded = state
    if permits ~= 0 then
      recorded = { log = capped(appended(log, t, permits), p) }
    end
    local rejected = state
    if p.countRejected then
      rejected = recorded
    end
    if permits == 0 or (count + permits <= p.limit and gapOver(log, t, p)) then
      local after = log
      if permits ~= 0 then
        after = recorded.log
      end
      return S.allow(0, remaining(total(after), p), resetAfter(after, t, p), recorded, rejected)
    end
    local left = log
    if rejected ~= state then
      left = rejected.log
    end
    return S.reject(remaining(total(left), p), retryAfter(left, t, permits, p), resetAfter(left, t, p), rejected)
  end

  function M.grantable(state, now, permits, p)
    local t = clock(state, now)
    local log = inWindow(state, t, p.window)
    if not gapOver(log, t, p) then
      return 0
    end
    return math.max(0, math.min(permits, p.limit - total(log)))
  end

  -- Passes 2^53 by up to a window when the newest entry is near MAX_TIME: see sluice.time_plus.
  function M.expiresAt(state, p)
    return S.time_plus(newest(state.log), p.window)
  end

  -- Keeps the log, minus what had already left the previous window at now.
  function M.migrate(state, previous, now, p)
    if state == nil then
      return nil
    end
    local log = inWindow(state, clock(state, now), previous.window)
    if log.n == 0 then
      return nil
    end
    return { log = log }
  end

  -- Settling a ticket: SlidingLogAlgorithm's Settleable (mark, settle), whose comment derives it. The mark is the
  -- time of the entry the charge went into; a refund takes its permits off that entry while it is in the window (an
  -- entry at 0 leaves the log), an extra charge is appended at now and the log capped, as after every write.
  function M.mark(state, now, p)
    return newest(state.log)
  end

  function M.settle(state, now, mark, estimate, actual, p)
    local t = clock(state, now)
    local log = inWindow(state, t, p.window)
    if actual > estimate then
      return { log = capped(appended(log, t, actual - estimate), p) }
    end
    if actual == estimate then
      return state
    end
    -- Lua only (a settlement is once per ticket, so it walks the log entry by entry and writes what is left as
    -- one new run of freshly encoded entries: the same text the decisions' runs would join to, as fmt_b36 is
    -- the only encoder).
    local out = {}
    local found = false
    local n, sum = 0, 0
    for i = 1, #log.runs do
      local r = log.runs[i]
      local pos = r.a
      while pos <= r.b do
        local time, permits, nextPos = entryAt(r.src, pos, r.b)
        if not found and time == mark then
          found = true
          permits = permits - (estimate - actual)
        end
        if permits > 0 then
          out[#out + 1] = S.fmt_b36(time) .. "," .. S.fmt_b36(permits)
          n = n + 1
          sum = sum + permits
        end
        pos = nextPos
      end
    end
    if not found then
      return state
    end
    if n == 0 then
      return nil
    end
    local text = table.concat(out, ",")
    return { log = newLog({ newRun(text, 1, #text, n, sum) }, n, sum) }
  end

  -- ---------------------------------------------------------------------------------- storage

  -- Lua only (speed: reads the log from its stored text, see the header).
  -- sluice.load_value, without decoding the log: the state, the fingerprint it was written under, whether the
  -- key exists. A value with another number of fields than "<fingerprint>|<log>" reads as no state, as there.
  function M.load(key, p)
    local value, exists = S.get_value(key)
    if value == nil then
      return nil, nil, exists
    end
    local bar = string.find(value, "|", 1, true)
    if bar == nil then
      return nil, value, true
    end
    local fingerprint = string.sub(value, 1, bar - 1)
    if string.find(value, "|", bar + 1, true) then
      return nil, fingerprint, true
    end
    if bar == #value then
      return { log = EMPTY }, fingerprint, true
    end
    return { log = { runs = { newRun(value, bar + 1, #value, nil, nil) } } }, fingerprint, true
  end

  -- Lua only (speed: reads the log from its stored text, see the header).
  -- sluice.save_value: "<fingerprint>|" and the runs joined by ','. A log that still starts with the whole stored
  -- value (nothing dropped, same fingerprint) is written as that value and what follows it: one copy.
  function M.save(key, state, p, fingerprint)
    local runs = state.log.runs
    local head = fingerprint .. "|"
    local parts = { head }
    local k = 1
    for i = 1, #runs do
      local r = runs[i]
      if i == 1 and r.a == #head + 1 and r.b == #r.src and string.sub(r.src, 1, #head) == head then
        parts[1] = r.src
      else
        local text = r.src
        if r.a ~= 1 or r.b ~= #text then
          text = string.sub(text, r.a, r.b)
        end
        if i > 1 then
          parts[k + 1] = ","
          k = k + 1
        end
        parts[k + 1] = text
        k = k + 1
      end
    end
    redis.call("SET", key, table.concat(parts))
  end

  ALG["sliding_log"] = M
end
