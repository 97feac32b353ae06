-- Argo CD health of a DelayedTaskQueue (docs/gitops.md): Suspended while paused, else Healthy.
-- A status written for an older generation describes a spec that is gone: Progressing until the
-- operator has seen the current one, as kstatus reads it.
local hs = {}

if obj.status == nil then
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

local waiting = obj.status.waiting or 0
local inFlight = obj.status.inFlight or 0
if obj.spec ~= nil and obj.spec.paused == true then
  hs.status = "Suspended"
  hs.message = "Paused; " .. waiting .. " due tasks wait until spec.paused is false"
else
  hs.status = "Healthy"
  hs.message = waiting .. " waiting, " .. inFlight .. " in flight"
end
return hs
