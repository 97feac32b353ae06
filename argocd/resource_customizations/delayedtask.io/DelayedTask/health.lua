-- Argo CD health of a DelayedTask, from status.phase (docs/gitops.md).
-- A status written for an older generation describes a spec that is gone: Progressing until the
-- operator has seen the current one, as kstatus reads it.
local hs = {}

if obj.status == nil or obj.status.phase == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for the operator"
  return hs
end

if obj.metadata.generation ~= nil and
    (obj.status.observedGeneration == nil or obj.status.observedGeneration < obj.metadata.generation) then
  hs.status = "Progressing"
  hs.message = "Waiting for the operator to observe generation " .. obj.metadata.generation
  return hs
end

local phase = obj.status.phase
local due = obj.status.dueTime or "an unknown time"

if phase == "Scheduled" then
  hs.status = "Healthy"
  hs.message = "Scheduled for " .. due
elseif phase == "Suspended" then
  hs.status = "Suspended"
  hs.message = "Suspended; it does not fire until spec.suspend is false"
elseif phase == "Running" then
  hs.status = "Progressing"
  if obj.status.jobName ~= nil then
    hs.message = "Job " .. obj.status.jobName .. " is running"
  elseif obj.status.delivery ~= nil and obj.status.delivery.nextAttemptTime ~= nil then
    hs.message = "Delivering to " .. (obj.status.sinkUri or "the sink") .. ": attempt " ..
        (obj.status.delivery.attempts or 0) .. " did not succeed, the next is at " .. obj.status.delivery.nextAttemptTime
  else
    hs.message = "Delivering to " .. (obj.status.sinkUri or "the sink")
  end
elseif phase == "Fired" then
  hs.status = "Healthy"
  hs.message = "Fired at " .. (obj.status.firedTime or due)
elseif phase == "Succeeded" then
  hs.status = "Healthy"
  if obj.status.jobName ~= nil then
    hs.message = "Job " .. obj.status.jobName .. " succeeded"
  else
    hs.message = "Delivered to " .. (obj.status.sinkUri or "the sink")
  end
elseif phase == "Failed" or phase == "Missed" or phase == "Invalid" then
  hs.status = "Degraded"
  hs.message = obj.status.message or phase
else
  -- a phase newer than this script
  hs.status = "Unknown"
  hs.message = "Unknown phase " .. phase
end
return hs
