-- Un-suspending schedules the task again; already overdue, it fires at once unless its deadline has passed.
if obj.spec ~= nil and obj.spec.suspend == true then
  obj.spec.suspend = false
end
return obj
