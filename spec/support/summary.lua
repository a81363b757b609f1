-- busted output handler for impetus: one line per spec file as it finishes, the failures in full,
-- and as the very last line "N passed, N failed" (errors count as failed; pending specs are listed).
return function(options)
  local busted = require "busted"
  local handler = require("busted.outputHandlers.base")()
  local file_counts = {}

  local function describe_failure(f, kind)
    local where = f.element.trace and f.element.trace.short_src and
        (f.element.trace.short_src .. ":" .. tostring(f.element.trace.currentline)) or "?"
    local msg = type(f.message) == "string" and f.message or tostring(f.message)
    local out = string.format("%s: %s\n  at %s\n  %s", kind, f.name or "?", where, (msg:gsub("\n", "\n  ")))
    if options.verbose and f.trace and f.trace.traceback then out = out .. "\n" .. f.trace.traceback end
    return out
  end

  local function file_of(element)
    local e = element
    while e and e.descriptor ~= "file" do e = busted.parent(e) end
    return e and e.name or "?"
  end

  handler.testEnd = function(element, parent, status)
    local f = file_of(element)
    local c = file_counts[f] or { passed = 0, failed = 0 }
    file_counts[f] = c
    if status == "success" then c.passed = c.passed + 1
    elseif status == "failure" or status == "error" then c.failed = c.failed + 1 end
    return nil, true
  end

  handler.fileEnd = function(element)
    local c = file_counts[element.name] or { passed = 0, failed = 0 }
    io.write(string.format("%-40s %3d passed, %d failed\n", element.name, c.passed, c.failed))
    io.flush()
    return nil, true
  end

  handler.suiteEnd = function()
    for _, f in ipairs(handler.failures) do io.write("\n" .. describe_failure(f, "FAILED") .. "\n") end
    for _, f in ipairs(handler.errors) do io.write("\n" .. describe_failure(f, "ERROR") .. "\n") end
    for _, p in ipairs(handler.pendings) do io.write("\npending: " .. tostring(p.name) .. "\n") end
    io.write(string.format("\n%d passed, %d failed\n", handler.successesCount,
      handler.failuresCount + handler.errorsCount))
    io.flush()
    return nil, true
  end

  busted.subscribe({ "test", "end" }, handler.testEnd, { predicate = handler.cancelOnPending })
  busted.subscribe({ "file", "end" }, handler.fileEnd)
  busted.subscribe({ "suite", "end" }, handler.suiteEnd)
  return handler
end
