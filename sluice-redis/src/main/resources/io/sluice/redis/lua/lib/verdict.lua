-- lib/verdict.lua: the verdict of one step, as Java's io.sluice.internal.algorithm.Step: allow and reject build it
-- with the Step record's field names (lease is -1: none; concurrency sets its own).

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
