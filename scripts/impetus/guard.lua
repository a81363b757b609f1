-- guard: calls into script code so that nothing a script does can take the host down.
-- Errors come back as values with a traceback; a callback that runs longer than `limit` seconds of
-- CPU (an endless loop) is interrupted by an instruction-count hook with a clear message.
local guard = { limit = 5.0 }

local function with_traceback(err)
  if type(err) ~= "string" then err = "(error object is a " .. type(err) .. ")" end
  return debug.traceback(err, 2)
end

-- guard.call(what, fn, ...) -> true, results... | false, message (with traceback)
function guard.call(what, fn, ...)
  local start, limit = os.clock(), guard.limit
  debug.sethook(function()
    if os.clock() - start > limit then
      debug.sethook()
      error(string.format("%s ran for more than %.1f s without returning: an endless loop?", what, limit), 2)
    end
  end, "", 10000)
  local results = table.pack(xpcall(fn, with_traceback, ...))
  debug.sethook()
  if not results[1] then
    return false, what .. ": " .. tostring(results[2])
  end
  return table.unpack(results, 1, results.n)
end

return guard
