-- lib/limit.lua: a limit's stored state as its current version reads it (io.sluice.internal.memory.MemoryStore's
-- load and migrate). Storing the next state is state_write.lua's store_limit.

--- A limit's stored state as its current version reads it at now: what rule.lua and sync.lua both do when
--- they open a limit. Under the current fingerprint the state is used as it is; under the fingerprint of a
--- previous version the client knows (known: fingerprint -> parameter words, or nil) it is migrated from that
--- version's parameters, or dropped when it had already expired under them; under any other fingerprint
--- (another algorithm, a version this client never saw, a record that changed shape) it is dropped: reset
--- explicitly, never misread. An expired state reads as no state. Returns the state and whether the key must
--- be written back even when nothing else changes it (a migrated or dropped state). An expired state is not
--- marked: like the in-memory store, the key is left to its TTL, so a clock that steps back finds it.
function sluice.settle(alg, p, fingerprint, state, stored, exists, known, now)
  local dirty = exists and state == nil
  if state ~= nil and stored ~= fingerprint and #stored == 3 then
    -- A state of one integer (state_int.lua) under other digits than the current fingerprint's: which version?
    stored = sluice.stored_version(stored, known)
  end
  if state ~= nil and stored ~= fingerprint then
    local words = nil
    if known ~= nil and stored ~= nil then
      words = known[stored]
    end
    if words == nil then
      state = nil
    else
      local previous = sluice.params(alg, words)
      if now >= alg.expiresAt(state, previous) then
        state = nil
      else
        state = alg.migrate(state, previous, now, p)
      end
    end
    dirty = true
  end
  if state ~= nil and now >= alg.expiresAt(state, p) then
    state = nil
  end
  return state, dirty
end

-- The parsed parameters of each limit version a call has named: PARSED[module][words] = alg.parse(words). In a
-- functions library (FCALL, sluice.keeps) this file runs once per server, so a version's words are parsed once,
-- not on every call (a token-bucket limit's words cost about 20,000 instructions to split and parse); with
-- EVALSHA nothing outlives the call, so there it parses and keeps nothing (a cache would only cost). Besides the
-- code, this and decode_state's states are all the library keeps between calls, and both are pure functions of
-- what the call itself reads: the same words always parse to the same parameters, so a kept entry answers exactly
-- what parsing again would (no port writes to its parameters outside parse; LuaLibrariesIT checks both alike).
-- Bounded: past PARSED_MAX entries (a calendar_window's words change with every window) it starts again empty, so
-- memory stays small whatever the clients send.
local PARSED, parsed_count, PARSED_MAX = nil, 0, 256

--- alg.parse of the parameter words (a string, as sent in ARGV), parsed once per version (see PARSED).
function sluice.params(alg, words)
  if not sluice.keeps then
    return alg.parse(sluice.words(words))
  end
  local versions = nil
  if PARSED ~= nil then
    versions = PARSED[alg]
    if versions ~= nil then
      local p = versions[words]
      if p ~= nil then
        return p
      end
    end
  end
  local p = alg.parse(sluice.words(words))
  if PARSED == nil or parsed_count >= PARSED_MAX then
    PARSED, parsed_count, versions = {}, 0, nil
  end
  if versions == nil then
    versions = {}
    PARSED[alg] = versions
  end
  versions[words] = p
  parsed_count = parsed_count + 1
  return p
end
