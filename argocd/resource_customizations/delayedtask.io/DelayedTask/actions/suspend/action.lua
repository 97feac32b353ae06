-- A suspended task does not fire; resume schedules it again.
if obj.spec == nil then
  obj.spec = {}
end
obj.spec.suspend = true
return obj
