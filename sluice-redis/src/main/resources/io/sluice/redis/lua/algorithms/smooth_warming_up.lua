-- algorithms/smooth_warming_up.lua: line-by-line port of io.sluice.internal.algorithm.SmoothWarmingUpAlgorithm.
-- The cost curve, its worked example and the invariants are in the Java class's essay; the shared model is
-- SmoothAlgorithm, ported in smooth_bursty.lua as sluice.smooth (that file is appended before this one).
-- Module shape: docs/redis-script-protocol.md.
--
-- Parameters (SmoothWarmingUp's record components after the name): permitsPerSecond (double), warmup
-- (micros), coldFactor (double). State (SmoothAlgorithm.State): storedPermits (double), nextFreeTicketMicros.
do
  local S = sluice
  local smooth = S.smooth
  if smooth == nil then
    error("sluice: smooth_warming_up.lua needs smooth_bursty.lua (sluice.smooth) before it")
  end
  local truncate = smooth.truncate
  local addSat = smooth.addSat

  -- The cost of one permit when permitsAboveThreshold are stored above the threshold.
  local function permitsToTime(permitsAboveThreshold, p)
    return p.stableIntervalMicros + permitsAboveThreshold * p.slope
  end

  local M = smooth.module({
    -- The area under the cost curve between storedPermits - permitsToTake and storedPermits: Guava's
    -- trapezoid above the threshold and rectangle below it, with Guava's two truncations in Guava's order.
    storedPermitsToWaitTime = function(storedPermits, permitsToTake, p)
      local aboveThreshold = storedPermits - p.thresholdPermits
      local rest = permitsToTake
      local micros = 0
      if aboveThreshold > 0.0 then
        local takenAbove = math.min(aboveThreshold, permitsToTake)
        local length = permitsToTime(aboveThreshold, p) + permitsToTime(aboveThreshold - takenAbove, p)
        micros = truncate(takenAbove * length / 2.0)
        rest = rest - takenAbove
      end
      return addSat(micros, truncate(p.stableIntervalMicros * rest))
    end,
    -- An idle key goes from 0 to maxPermits in warmup.
    coolDownIntervalMicros = function(p)
      return p.warmupMicros / p.maxPermits
    end,
    -- A new key is cold.
    initialStoredPermits = function(p)
      return p.maxPermits
    end,
    sameLimit = function(p, q)
      return p.permitsPerSecond == q.permitsPerSecond and p.warmupMicros == q.warmupMicros
          and p.coldFactor == q.coldFactor
    end,
  })

  -- The constructor: Guava's doSetRate expressions, operand for operand and in Guava's order (maxPermits
  -- first, through the static helper, then threshold and slope again as the constructor does).
  function M.parse(w)
    local permitsPerSecond = S.arg_num(w[1])
    local warmupMicros = S.arg_int(w[2])
    local coldFactor = S.arg_num(w[3])
    local stableIntervalMicros = smooth.stableIntervalMicros(permitsPerSecond)
    local maxPermits
    do -- SmoothWarmingUpAlgorithm.maxPermits(stableIntervalMicros, warmupMicros, coldFactor)
      local coldIntervalMicros = stableIntervalMicros * coldFactor
      local thresholdPermits = 0.5 * warmupMicros / stableIntervalMicros
      maxPermits = thresholdPermits + 2.0 * warmupMicros / (stableIntervalMicros + coldIntervalMicros)
    end
    local coldIntervalMicros = stableIntervalMicros * coldFactor
    local thresholdPermits = 0.5 * warmupMicros / stableIntervalMicros
    return {
      permitsPerSecond = permitsPerSecond,
      warmupMicros = warmupMicros,
      coldFactor = coldFactor,
      stableIntervalMicros = stableIntervalMicros,
      maxPermits = maxPermits,
      thresholdPermits = thresholdPermits,
      slope = (coldIntervalMicros - stableIntervalMicros) / (maxPermits - thresholdPermits),
    }
  end

  ALG["smooth_warming_up"] = M
end
