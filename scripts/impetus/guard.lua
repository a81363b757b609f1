-- guard: calls into script code so that nothing a script does can take the host down.
-- Errors come back as values with a traceback. A callback that runs longer than `limit` seconds of CPU
-- (an endless loop) is interrupted by an instruction-count hook with a clear message; once the limit
-- is passed the hook fires on every instruction until the callback returns, so a loop that swallows
-- the error (`while true do pcall(f) end`) is interrupted too: the first instruction it runs outside
-- the pcall raises again. A signal to the host (SIGTERM, SIGINT; render/main.c) interrupts it the same
-- way. Coroutines the scene creates through guard.coroutine carry the same hook.
local guard = { limit = 5.0 }

local deadline = nil   -- os.clock() after which the running guarded call is interrupted
local running = nil    -- what it is ("update", "setup", ...)
local fired = nil      -- the message, once the watchdog has fired for the running call
local host = nil       -- impetus.host (the host program's signal flag), when present

local COUNT = 10000    -- instructions between checks while within the limit

local guard_call -- guard.call itself: the hook never raises in it (it is cleaning up after the callback)

local function hook()
  if not deadline then return end
  if fired and debug.getinfo(2, "f").func == guard_call then return end
  if not fired then
    if os.clock() > deadline then
      fired = string.format("%s ran for more than %.1f s without returning: an endless loop?", running, guard.limit)
    elseif host and host.interrupted() then
      fired = string.format("%s was interrupted: the host is quitting (signal %d)", running, host.interrupted())
    else
      return
    end
  end
  -- from now on: every instruction of this coroutine raises until the guarded call returns
  debug.sethook(hook, "", 1)
  error(fired, 2)
end

-- guard.call(what, fn, ...) -> true, results... | false, message (with traceback)
function guard.call(what, fn, ...)
  host = host or package.loaded["impetus.host"]
  local outer_deadline, outer_running, outer_fired = deadline, running, fired
  local outer_hook, outer_mask, outer_count = debug.gethook()
  deadline, running, fired = os.clock() + guard.limit, what, nil
  debug.sethook(hook, "", COUNT)
  -- the message handler is C (debug.traceback), so the hook cannot raise inside it
  local results = table.pack(xpcall(fn, debug.traceback, ...))
  local watchdog = fired
  deadline = outer_deadline -- first, alone: with fired cleared and the deadline still set the hook would fire
  running, fired = outer_running, outer_fired
  if outer_hook then debug.sethook(outer_hook, outer_mask, outer_count) else debug.sethook() end
  if not results[1] then
    local err = results[2]
    if type(err) ~= "string" then err = "(error object is a " .. type(err) .. ")" end
    return false, what .. ": " .. err
  end
  -- the watchdog fired but the callback caught every error and returned: still a failure
  if watchdog then return false, what .. ": " .. watchdog end
  return table.unpack(results, 1, results.n)
end

guard_call = guard.call

-- coroutine functions for scene environments: new coroutines get the watchdog hook too
guard.coroutine = setmetatable({
  create = function(f)
    local co = coroutine.create(f)
    debug.sethook(co, hook, "", COUNT)
    return co
  end,
  wrap = function(f)
    local co = coroutine.create(f)
    debug.sethook(co, hook, "", COUNT)
    return function(...)
      local r = table.pack(coroutine.resume(co, ...))
      if not r[1] then error(r[2], 2) end
      return table.unpack(r, 2, r.n)
    end
  end,
}, { __index = coroutine })

return guard
