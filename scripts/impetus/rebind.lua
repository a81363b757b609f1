-- rebind: after a hot reload, find the new version of each function the old scene had registered
-- somewhere that outlives the reload (impetus.on_contact handlers, a camera following a function).
--
-- A function is found by its path from the scene: the scene table's fields ("scene.setup"), nested
-- tables ("scene.handlers.ball"), and the upvalues of those functions ("scene.setup^on_hit": the
-- file-level `local function on_hit` that setup refers to), and the same from the modules the scene
-- required from its folder. The path of an old function, looked up in the reloaded scene, gives its
-- new version. A closure made inside a function at run time (an inline `function(self, other, e)`
-- written in setup) has no such path: it keeps its old code until the scene restarts (R).
local rebind = {}

local MAX_DEPTH = 6

-- breadth-first walk from the roots ({{name, value}, ...}); calls visit(path, fn) once per function,
-- with its shortest path (ties broken by sorted key order, so the walk is the same every time)
local function walk(roots, visit)
  local seen = {}
  local queue, head, tail = {}, 1, 0
  local function push(item) tail = tail + 1; queue[tail] = item end
  for _, root in ipairs(roots) do push { root[1], root[2], 0 } end
  while head <= tail do
    local path, v, depth = table.unpack(queue[head])
    queue[head] = nil
    head = head + 1
    if (type(v) == "table" or type(v) == "function") and not seen[v] and depth <= MAX_DEPTH then
      seen[v] = true
      if type(v) == "function" then
        visit(path, v)
        for i = 1, 255 do
          local name, up = debug.getupvalue(v, i)
          if not name then break end
          if name ~= "_ENV" then push { path .. "^" .. name, up, depth + 1 } end
        end
      elseif getmetatable(v) == nil then -- plain data tables only (not modules' objects with behaviour)
        local keys = {}
        for k in pairs(v) do
          if type(k) == "string" or math.type(k) == "integer" then keys[#keys + 1] = k end
        end
        table.sort(keys, function(a, b)
          if type(a) == type(b) then return a < b end
          return type(a) == "number"
        end)
        for _, k in ipairs(keys) do push { path .. "." .. tostring(k), v[k], depth + 1 } end
      end
    end
  end
end

-- function -> path, for the old scene
function rebind.index(roots)
  local index = {}
  walk(roots, function(path, fn) index[fn] = path end)
  return index
end

-- path -> function, for the new scene
function rebind.paths(roots)
  local paths = {}
  walk(roots, function(path, fn) paths[path] = fn end)
  return paths
end

-- a function that maps an old function to its new version (or nil when it has none)
function rebind.mapper(old_roots, new_roots)
  local index, paths = rebind.index(old_roots), rebind.paths(new_roots)
  return function(fn)
    local path = index[fn]
    return path and paths[path] or nil
  end
end

-- "scene.lua:42" for a Lua function
function rebind.where(fn)
  local info = debug.getinfo(fn, "S")
  return string.format("%s:%d", (info.short_src or "?"):match("[^/]*$"), info.linedefined or 0)
end

return rebind
