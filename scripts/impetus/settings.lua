-- settings: what a scene table may hold, and the check that turns a bad one into a clear error
-- (naming the field, what it must be, and what it was) instead of a crash somewhere in the host.
--
-- Callbacks are functions the runner calls; settings are data. An unknown data field is an error
-- (a misspelt setting would otherwise be ignored silently); an unknown function is the scene's own
-- helper, unless its name is a near miss of a callback ("keypresed"), which is an error too.
local Camera = require "impetus.camera"
local args = require "impetus.args"

local settings = {}

settings.callbacks = {
  "setup", "update", "draw", "on_reload",
  "keypressed", "keyreleased", "mousepressed", "mousereleased", "mousemoved", "wheelmoved",
}

settings.fields = { "title", "dt", "camera", "background", "grid", "debug", "viewer", "keys", "shadows" }

local DEBUG_KEYS = { contacts = true, aabbs = true, centers = true, velocities = true }
local VIEWER_KEYS = { keys = true, mouse = true, hud = true, grid = true, timeline = true }

local is_callback, is_field = {}, {}
for _, k in ipairs(settings.callbacks) do is_callback[k] = true end
for _, k in ipairs(settings.fields) do is_field[k] = true end

local function finite(x) return type(x) == "number" and x == x and x > -math.huge and x < math.huge end

local function show(v)
  if type(v) == "string" then return string.format("%q", v) end
  return tostring(v)
end

-- Levenshtein distance, for "did you mean"
local function distance(a, b)
  local prev = {}
  for j = 0, #b do prev[j] = j end
  for i = 1, #a do
    local cur = { [0] = i }
    for j = 1, #b do
      cur[j] = math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a:sub(i, i) == b:sub(j, j) and 0 or 1))
    end
    prev = cur
  end
  return prev[#b]
end

local function near_miss(name, list)
  local lower = name:lower()
  for _, k in ipairs(list) do
    if lower == k or distance(lower, k) <= math.max(1, math.min(2, #k // 4)) then return k end
  end
end

-- a colour {r, g, b[, a]} with numbers in 0..1
function settings.check_color(c, what)
  if type(c) ~= "table" then
    error(string.format("%s must be a colour {r, g, b[, a]} with numbers in 0..1 (got %s %s)", what, type(c), show(c)), 0)
  end
  for i = 1, 4 do
    local v = c[i]
    if not (i == 4 and v == nil) and not (finite(v) and v >= 0 and v <= 1) then
      error(string.format("%s must be a colour {r, g, b[, a]} with numbers in 0..1 (component %d is %s)", what, i, show(v)), 0)
    end
  end
  local stray = args.stray(c, 4, false)
  if stray then error(string.format("%s must be a colour {r, g, b[, a]}: %s", what, stray), 0) end
  return c
end

-- a fixed step in seconds: a finite number > 0 (and at most 1 s: a step is a small slice of time)
function settings.check_dt(dt, what)
  if not finite(dt) or dt <= 0 or dt > 1 then
    error(string.format("%s must be a number of seconds > 0 and <= 1 (got %s %s)", what, type(dt), show(dt)), 0)
  end
  return dt
end

-- the viewer's switches: viewer = false (all off), or a table of booleans keys, mouse, hud, grid,
-- timeline (the history: its bar, its keys and the keyframes it keeps)
function settings.viewer(scene)
  local v = scene.viewer
  local out = { keys = true, mouse = true, hud = true, grid = scene.grid ~= false, timeline = true }
  if v == false then
    out.keys, out.mouse, out.hud, out.grid, out.timeline = false, false, false, false, false
  elseif type(v) == "table" then
    for k in pairs(VIEWER_KEYS) do if v[k] ~= nil then out[k] = v[k] end end
  end
  return out
end

-- nil when the scene table is usable, else a message
function settings.check(scene)
  local ok, err = pcall(function()
    for k, v in pairs(scene) do
      if type(k) ~= "string" then
        error(string.format("the scene table takes named fields only (found key %s)", show(k)), 0)
      end
      if is_callback[k] then
        if type(v) ~= "function" then error(string.format("scene.%s must be a function (got %s)", k, type(v)), 0) end
      elseif not is_field[k] then
        if type(v) == "function" then
          local m = near_miss(k, settings.callbacks)
          if m then error(string.format("scene.%s is not a callback: did you mean '%s'?", k, m), 0) end
        else
          local m = near_miss(k, settings.fields)
          error(string.format("scene: unknown setting '%s'%s (settings: %s; callbacks: %s; other functions are "
            .. "the scene's own)", k, m and (" (did you mean '" .. m .. "'?)") or "", table.concat(settings.fields, ", "),
            table.concat(settings.callbacks, ", ")), 0)
        end
      end
    end
    if scene.title ~= nil and type(scene.title) ~= "string" then
      error(string.format("scene.title must be a string (got %s)", type(scene.title)), 0)
    end
    if scene.dt ~= nil then settings.check_dt(scene.dt, "scene.dt") end
    if scene.camera ~= nil then Camera.check(scene.camera, "scene.camera") end
    if scene.background ~= nil then settings.check_color(scene.background, "scene.background") end
    for _, k in ipairs { "grid", "shadows" } do
      if scene[k] ~= nil and type(scene[k]) ~= "boolean" then
        error(string.format("scene.%s must be true or false (got %s)", k, type(scene[k])), 0)
      end
    end
    if scene.debug ~= nil then
      if type(scene.debug) ~= "table" then error("scene.debug must be a table such as {contacts = true}", 0) end
      for k, v in pairs(scene.debug) do
        if not DEBUG_KEYS[k] then
          error(string.format("scene.debug: unknown view '%s' (known: contacts, aabbs, centers, velocities)", tostring(k)), 0)
        end
        if type(v) ~= "boolean" then error(string.format("scene.debug.%s must be true or false", k), 0) end
      end
    end
    local v = scene.viewer
    if v ~= nil and v ~= false and v ~= true then
      if type(v) ~= "table" then error("scene.viewer must be false or a table {keys, mouse, hud, grid, timeline} of booleans", 0) end
      for k, b in pairs(v) do
        if not VIEWER_KEYS[k] then
          error(string.format("scene.viewer: unknown switch '%s' (known: keys, mouse, hud, grid, timeline)", tostring(k)), 0)
        end
        if type(b) ~= "boolean" then error(string.format("scene.viewer.%s must be true or false", k), 0) end
      end
    end
    if scene.keys ~= nil then
      if type(scene.keys) ~= "table" then error("scene.keys must be a list of {key, what it does} pairs", 0) end
      local stray = args.stray(scene.keys, #scene.keys, false)
      if stray then error(string.format("scene.keys must be a list of {key, what it does} pairs: %s", stray), 0) end
      for i, pair in ipairs(scene.keys) do
        if type(pair) ~= "table" or type(pair[1]) ~= "string" or type(pair[2]) ~= "string" then
          error(string.format("scene.keys[%d] must be a pair of strings {\"space\", \"fire\"}", i), 0)
        end
        stray = args.stray(pair, 2, false)
        if stray then error(string.format("scene.keys[%d] must be a pair of strings {\"space\", \"fire\"}: %s", i, stray), 0) end
      end
    end
  end)
  if not ok then return err end
end

-- the set of key names a scene lists in scene.keys ("space", "a", "left"); an entry may name
-- several keys separated by " / " or ", " ("left / right" lists both)
function settings.scene_keys(scene)
  local set = {}
  if type(scene.keys) == "table" then
    for _, pair in ipairs(scene.keys) do
      if type(pair) == "table" and type(pair[1]) == "string" then
        for name in pair[1]:gmatch("[^/,]+") do
          name = name:match("^%s*(.-)%s*$"):lower():gsub(" ", "_")
          if name ~= "" then set[name] = true end
        end
      end
    end
  end
  return set
end

return settings
