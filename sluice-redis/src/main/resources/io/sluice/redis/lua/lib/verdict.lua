-- lib/verdict.lua: the verdict of one step, as Java's io.sluice.internal.algorithm.Step: allow and reject build it
-- with the Step record's field names (lease is -1: none; concurrency sets its own).
--
-- Lua only (speed): a port's M.step may return a second value, the admitted state's M.expiresAt, when it computes
-- it on the way to resetAfterMicros anyway (token_bucket: one fullAt for both); the dispatcher then hands it to
-- store_limit instead of computing it again. A second return value, not a verdict field: a ninth field would
-- double the verdict table's hash part on every step. LuaLibrariesIT checks it equals M.expiresAt(admitted).

--- Java's Step.allow: an admitting verdict. Field names are the Step record's.
function sluice.allow(waitMicros, remaining, resetAfterMicros, admitted, rejected)
  return { allowed = true, waitMicros = waitMicros, remaining = remaining, retryAfterMicros = 0,
           resetAfterMicros = resetAfterMicros, admitted = admitted, rejected = rejected, lease = -1 }
end

--- Java's Step.reject: a rejecting verdict (admitted is nil).
function sluice.reject(remaining, retryAfterMicros, resetAfterMicros, rejected)
  return { allowed = false, waitMicros = 0, remaining = remaining, retryAfterMicros = retryAfterMicros,
           resetAfterMicros = resetAfterMicros, admitted = nil, rejected = rejected, lease = -1 }
end
