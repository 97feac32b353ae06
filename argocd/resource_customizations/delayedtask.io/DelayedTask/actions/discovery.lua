-- suspend: only while the task may still fire (not suspended, not fired or finished).
-- resume: only when spec.suspend is true.
local actions = {}

local suspended = obj.spec ~= nil and obj.spec.suspend == true
local phase = obj.status ~= nil and obj.status.phase or nil
-- Running has fired already: suspending would not stop its Job.
local fired = phase == "Running" or phase == "Fired" or phase == "Succeeded"
    or phase == "Failed" or phase == "Missed"

actions["suspend"] = {["iconClass"] = "fa fa-fw fa-pause", ["disabled"] = suspended or fired}
actions["resume"] = {["iconClass"] = "fa fa-fw fa-play", ["disabled"] = not suspended}
return actions
