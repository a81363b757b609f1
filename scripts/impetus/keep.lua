-- keep: a copy of a scene's Lua data, put back in place later (the history's keyframes hold one beside
-- the world's snapshot, so a rewound game has its score, its level and its handles as they were).
--
--   local kept = keep.take(roots, is_scene_function)
--   keep.put_back(kept)
--   kept.bytes                        what the copy holds (Lua memory it allocated)
--
-- What is kept: every table reachable from the roots (the scene's `state`, its globals, its table of
-- callbacks, its modules, the contact handlers), its contents copied one level (the values are the same
-- values: nested tables are kept in their own right), and every upvalue of the scene's own functions
-- (is_scene_function says which: those defined in its files), so a file-level `local score = 0` that a
-- handler counts up rewinds too. Put back, each table is emptied and refilled in place and each upvalue
-- set again, so every reference a script holds to a table stays good and sees what it held.
--
-- Not kept: the engine's modules (package.loaded tables other than the scene's) and the host's objects
-- (the runner, its history, viewer, camera, input), _G, weak tables (caches), metatables, and what
-- lives outside Lua values (a coroutine's stack; files). Userdata
-- (handles, the World) are kept as references: the world's snapshot rewinds what they refer to.
local keep = {}

-- tables a scene reaches but does not own: the engine's and Lua's modules, and _G
local function foreign_tables(own_modules)
  local foreign = { [_G] = true, [package.loaded] = true, [package] = true }
  for name, mod in pairs(package.loaded) do
    if type(mod) == "table" and not own_modules[name] then foreign[mod] = true end
  end
  return foreign
end

local function weak(t)
  local mt = getmetatable(t)
  return type(mt) == "table" and rawget(mt, "__mode") ~= nil
end

-- roots: a list of tables and functions; own_modules: the names of the scene's own modules (their tables
-- are kept); is_scene_function(fn): whether fn's upvalues are the scene's; host: tables of the host that
-- a scene's data may refer to (the runner, its camera...), neither kept nor walked into
function keep.take(roots, own_modules, is_scene_function, host)
  local running = collectgarbage("isrunning")
  collectgarbage("stop")
  local before = collectgarbage("count")
  local foreign = foreign_tables(own_modules or {})
  for _, t in ipairs(host or {}) do foreign[t] = true end
  local seen = {}
  local tables, upvalues = {}, {}
  local stack = {}
  for i = #roots, 1, -1 do stack[#stack + 1] = roots[i] end
  while #stack > 0 do
    local v = table.remove(stack)
    local t = type(v)
    if t == "table" and not seen[v] and not foreign[v] and not weak(v) then
      seen[v] = true
      local copy = {}
      for k, x in next, v do
        copy[k] = x
        if type(x) == "table" or type(x) == "function" then stack[#stack + 1] = x end
        if type(k) == "table" or type(k) == "function" then stack[#stack + 1] = k end
      end
      tables[#tables + 1] = { v, copy }
    elseif t == "function" and not seen[v] then
      seen[v] = true
      if is_scene_function(v) then
        for i = 1, 255 do
          local name, x = debug.getupvalue(v, i)
          if not name then break end
          if name ~= "_ENV" then
            upvalues[#upvalues + 1] = { v, i, x }
            if type(x) == "table" or type(x) == "function" then stack[#stack + 1] = x end
          end
        end
      end
    end
  end
  local kept = { tables = tables, upvalues = upvalues }
  kept.bytes = math.floor((collectgarbage("count") - before) * 1024)
  if running then collectgarbage("restart") end
  return kept
end

function keep.put_back(kept)
  for _, entry in ipairs(kept.tables) do
    local t, copy = entry[1], entry[2]
    for k in next, t do rawset(t, k, nil) end
    for k, x in next, copy do rawset(t, k, x) end
  end
  for _, u in ipairs(kept.upvalues) do debug.setupvalue(u[1], u[2], u[3]) end
end

return keep
