-- reliability: the harness of spec/reliability_spec.lua. Each case
-- is a script run in a child lua5.4 under a time limit, so that a crash, a sanitizer report or a
-- hang fails that case instead of taking busted down. Under `./impetus test --sanitize` the children
-- inherit the sanitizer runtimes (LD_PRELOAD) and options, so a UBSan or ASan report fails the case
-- too.
local reliability = {}

local BUILD = os.getenv("IMPETUS_BUILD") or "build/release"
reliability.LIMIT = tonumber(os.getenv("RELIABILITY_SECONDS") or "") or 60

-- what every case starts with: the module, and clean(pcall(...)), which passes the results of a
-- call through and fails the case when its error is not a clean error of the API (an internal
-- "attempt to ..." error, a non-string error object, a position inside the Lua layer)
local PREAMBLE = string.format([[
package.path = "scripts/?.lua;scripts/?/init.lua;" .. package.path
package.cpath = %q .. "/lib/?.so;" .. package.cpath
local impetus = require "impetus"
local function clean(ok, err, ...)
  if not ok then
    assert(type(err) == "string", "the error is a " .. type(err))
    assert(not err:find("attempt to ", 1, true), "an internal error: " .. err)
    assert(not err:match("^[^\n]*%%.lua:%%d+:"), "an error from inside the Lua layer: " .. err)
  end
  return ok, err, ...
end
]], BUILD)

-- run src in a child process; returns its exit status and output (stdout and stderr)
local function child(src, seconds)
  local path = os.tmpname()
  local f = assert(io.open(path, "w"))
  f:write(PREAMBLE, src, "\nio.write('RELIABLE\\n')\n")
  f:close()
  local p = io.popen(string.format("timeout -s KILL %d lua5.4 %s 2>&1", seconds, path))
  local out = p:read("a")
  local _, _, status = p:close()
  os.remove(path)
  return status, out
end

-- holds(src [, seconds]): the case passes when the child ran to its end: no crash, no sanitizer
-- report, no hang, every assertion in it held
function reliability.holds(src, seconds)
  seconds = seconds or reliability.LIMIT
  local status, out = child(src, seconds)
  if status == 137 then error("hung: killed after " .. seconds .. " s\n" .. out, 2) end
  if status ~= 0 or not out:find("RELIABLE\n", 1, true) or out:find("runtime error:", 1, true) then
    error(string.format("exit status %s:\n%s", tostring(status), out), 2)
  end
end

return reliability
