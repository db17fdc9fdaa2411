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
  if state ~= nil and stored ~= fingerprint then
    local words = nil
    if known ~= nil and stored ~= nil then
      words = known[stored]
    end
    if words == nil then
      state = nil
    else
      local previous = alg.parse(sluice.words(words))
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
