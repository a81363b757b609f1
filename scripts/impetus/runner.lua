-- runner: one scene, its world, the fixed-step clock, hot reload, and the scene's input and camera. No
-- window here: the host's frame loop (run.lua) and the specs both drive a runner, the specs with
-- scripted input (press_key, click, ...) that takes the same path as a window's events.
--
-- A scene file returns a table of callbacks (setup, update, draw, on_reload, keypressed, keyreleased,
-- mousepressed, mousereleased, mousemoved, wheelmoved) and settings (title, dt, camera, background,
-- grid, debug, viewer, keys, shadows); settings.lua checks it. Saving the file (or a module it required
-- from its own folder) re-executes it and swaps the callbacks without touching the world; the global
-- `state` table survives reloads and restarts.
--
-- A runner counts its fixed steps (tick, from 0 at each start and restart) and seeds impetus.random with
-- its seed at each start and restart. With a history (history.lua) it logs every step, input event and
-- reload and keeps keyframes, so that it can go back to any tick of the last 30 s and a run can be
-- recorded and replayed bit for bit (record.lua).
local core = require "impetus.core"
local guard = require "impetus.guard"
local active = require "impetus.active"
local settings = require "impetus.settings"
local Camera = require "impetus.camera"
local Input = require "impetus.input"
local rebind = require "impetus.rebind"
local random = require "impetus.random"
local args = require "impetus.args"

local Runner = {}
Runner.__index = Runner

-- catch-up limits of advance(): per frame at most max(max_steps_per_frame, 50 ms of simulated time)
-- steps and never more than MAX_CATCHUP; what is left is dropped and reported as `behind`
local MAX_CATCHUP = 1000

local function dirname(path) return path:match("^(.*)[/\\]") or "." end

-- mtime and size of a file as one comparable string ("" when missing)
local function signature(path)
  local t, size = core.mtime(path)
  return t and string.format("%.9f:%d", t, size) or ""
end

local function deep_equal(a, b)
  if a == b then return true end
  if type(a) ~= "table" or type(b) ~= "table" then return false end
  for k, v in pairs(a) do if not deep_equal(v, b[k]) then return false end end
  for k in pairs(b) do if a[k] == nil then return false end end
  return true
end

-- opts: dt (overrides the scene's), max_steps_per_frame (8), size = {w, h} (the window's, for mouse
-- coordinates; 1280 x 720 until a window says otherwise), viewer (true: attach the viewer's key and
-- mouse handling without a window, for specs), seed (impetus.random's at every start and restart;
-- default: the time), history (true or {budget, span, keep_log}: keep the past, history.lua), sources
-- ({[file] = text}: load these files from here instead of the disk, as a replay does)
function Runner.new(path, opts)
  opts = opts or {}
  if type(path) ~= "string" then error("runner: argument 'path' must be a file name", 2) end
  if type(opts) ~= "table" then
    error("runner: argument 'opts' must be a table {dt, max_steps_per_frame, size, viewer, seed, history, sources}", 2)
  end
  local known = { dt = true, max_steps_per_frame = true, size = true, viewer = true, seed = true, history = true, sources = true }
  for k in pairs(opts) do
    if not known[k] then
      error(string.format("runner: unknown option '%s' (known: dt, max_steps_per_frame, size, viewer, seed, history, sources)",
        tostring(k)), 2)
    end
  end
  if opts.size ~= nil then
    local s = opts.size
    if type(s) ~= "table" or args.stray(s, 2, false) or math.type(s[1]) ~= "integer" or math.type(s[2]) ~= "integer"
      or s[1] < 1 or s[2] < 1 then
      error("runner: option 'size' must be {width, height} in whole pixels >= 1", 2)
    end
  end
  if opts.max_steps_per_frame ~= nil and (math.type(opts.max_steps_per_frame) ~= "integer" or opts.max_steps_per_frame < 1) then
    error("runner: option 'max_steps_per_frame' must be a whole number >= 1", 2)
  end
  if opts.dt ~= nil then settings.check_dt(opts.dt, "runner: option 'dt'") end
  local self = setmetatable({
    path = path,
    dir = dirname(path),
    modules = {},          -- name -> file of modules the scene required from its folder
    stamps = {},           -- file -> signature when last loaded
    scene = {},
    dt = opts.dt,
    accumulator = 0,
    paused = false,
    error = nil,           -- message of the current script error (the simulation waits)
    warning = nil,         -- last NaN-guard report, or a reload notice
    behind = nil,          -- {ratio, frames}: advance() dropped steps to keep up
    max_steps_per_frame = opts.max_steps_per_frame or 8,
    needs_setup = true,
    reloads = 0,
    state = {},            -- the scene's `state`: kept across reloads and restarts
    scene_keys = {},       -- keys the scene lists (settings.scene_keys)
    tick = 0,              -- fixed steps since the world was made
    seed = opts.seed or os.time(),
    sources = opts.sources, -- file -> text to load in place of the file (a replay's)
  }, Runner)
  local size = opts.size or { 1280, 720 }
  self.input = Input.new(self, size[1], size[2])
  self.camera = Camera.new(nil)
  if opts.viewer then require("impetus.viewer").new(self) end
  if opts.history then require("impetus.history").new(self, opts.history ~= true and opts.history or nil) end
  return self
end

-- a file's text: the sources given (a replay's), else the disk's; nil, message when unreadable
function Runner:_source(file)
  if self.sources and self.sources[file] then return self.sources[file] end
  local f, err = io.open(file, "r")
  if not f then return nil, err end
  local text = f:read("a")
  f:close()
  return text
end

-- compile a file of the scene in its environment
function Runner:_compile(file, env)
  if self.sources and self.sources[file] then return load(self.sources[file], "@" .. file, "t", env) end
  return loadfile(file, "t", env)
end

-- the texts of the scene's files as loaded now (a recording keeps them)
function Runner:sources_now()
  local out = {}
  for file in pairs(self.stamps) do out[file] = self:_source(file) end
  return out
end

-- the scene's environment: globals fall through to _G; require finds modules next to the scene.
-- One environment lives as long as the runner, so globals a scene sets survive a reload.
function Runner:_env()
  if self.env then return self.env end
  local env = setmetatable({}, { __index = _G })
  self.env = env
  env.state = self.state
  env.coroutine = guard.coroutine -- coroutines the scene makes are watched too
  local search = self.dir .. "/?.lua;" .. self.dir .. "/?/init.lua"
  env.require = function(name)
    local file = package.searchpath(name, search)
    if file then
      self.modules[name] = file
      if not package.loaded[name] then
        local chunk, err = self:_compile(file, env)
        if not chunk then error(err, 2) end
        package.loaded[name] = chunk(name, file) or true
      end
      return package.loaded[name]
    end
    return require(name)
  end
  return env
end

-- the roots from which rebind finds the scene's functions
function Runner:_roots(scene)
  local roots = { { "scene", scene } }
  local names = {}
  for name in pairs(self.modules) do names[#names + 1] = name end
  table.sort(names)
  for _, name in ipairs(names) do roots[#roots + 1] = { "module:" .. name, package.loaded[name] } end
  return roots
end

-- compile and run the scene file; returns the scene table or nil, message
function Runner:_load()
  for name in pairs(self.modules) do package.loaded[name] = nil end
  self.modules = {}
  local env = self:_env()
  local chunk, err = self:_compile(self.path, env)
  if not chunk then return nil, "syntax error: " .. err end
  active.runner = self
  local ok, scene = guard.call("loading " .. self.path, chunk)
  if not ok then return nil, scene end
  if type(scene) ~= "table" then
    return nil, self.path .. " must return a scene table (got " .. type(scene) .. ")"
  end
  local bad = settings.check(scene)
  if bad then return nil, self.path .. ": " .. bad end
  return scene
end

function Runner:_stamp()
  self.stamps = { [self.path] = signature(self.path) }
  for _, file in pairs(self.modules) do self.stamps[file] = signature(file) end
end

function Runner:fail(message)
  self.error = message
end

-- take a loaded scene's settings: the keys it claims, and its camera when that changed
function Runner:_adopt(scene)
  local old = self.scene
  self.scene = scene
  self.scene_keys = settings.scene_keys(scene)
  if not deep_equal(old.camera, scene.camera) or not self.camera_set then
    self.camera:reset_to(scene.camera)
    self.camera_set = true
  end
end

-- load the scene, make a fresh world and run setup(world); on error the runner waits for a fix
function Runner:start()
  active.runner = self
  local scene, err = self:_load()
  self:_stamp()
  if not scene then return self:fail(err) end
  self:_adopt(scene)
  return self:restart()
end

-- a fresh world and setup again (key R); the camera goes back to the scene's. The old world's C
-- memory is freed here, not when the collector finds it (its handles a script kept become stale),
-- so a scene restarted every few seconds for hours holds one world at a time.
function Runner:restart()
  active.runner = self
  if self.viewer then self.viewer:release_drag() end
  local old = self.world
  if old and old:valid() and not old.locked then old:destroy() end
  random.seed(self.seed)
  if self.math_seed then math.randomseed(self.math_seed) end -- (history.lua) setup draws the same numbers
  self.tick = 0
  self.world = core.world()
  self.accumulator = 0
  self.error = nil
  self.warning = nil
  self.behind = nil
  self.needs_setup = false
  self.restart_requested = nil
  self.camera:follow(nil)
  self.camera:reset_to(self.scene.camera)
  if self.scene.setup then
    local ok, err = guard.call("setup", self.scene.setup, self.world)
    if not ok then
      self.needs_setup = true
      return self:fail(err)
    end
  end
  if self.math_seed then math.randomseed(self.math_seed + 1) end -- a known state after setup (history.lua)
  if self.history then self.history:reset() end
  if self.recording then require("impetus.record").started(self) end
  return true
end

function Runner:step_dt()
  return self.dt or self.scene.dt or 1 / 60
end

-- true when the scene file or one of its modules changed on disk since the last load
function Runner:changed()
  for file, stamp in pairs(self.stamps) do
    if signature(file) ~= stamp then return true end
  end
  return false
end

-- re-execute the scene file and swap its handlers, keeping the world (hot reload); sources: the files'
-- texts to load (a replay's), else the disk's
function Runner:reload(sources)
  if sources then self.sources = sources end
  local old_roots = self:_roots(self.scene)
  local scene, err = self:_load()
  self:_stamp()
  if not scene then
    self:fail(err)
    return false
  end
  self:_adopt(scene)
  self.reloads = self.reloads + 1
  if self.needs_setup or not self.world then return self:restart() end
  self.error = nil
  self.warning = nil
  self:_rebind(old_roots)
  if scene.on_reload then
    active.runner = self
    local ok, e = guard.call("on_reload", scene.on_reload, self.world)
    if not ok then self:fail(e) return false end
  end
  if self.history and not self.replaying then self.history:note_reload(self:sources_now()) end
  return true
end

-- point what outlives a reload (on_contact handlers, a followed function) at the new functions
function Runner:_rebind(old_roots)
  local map = rebind.mapper(old_roots, self:_roots(self.scene))
  local stale = require("impetus.contacts").rebind(self.world, map)
  local f = self.camera.following
  if f and type(f.thing) == "function" then
    local new = map(f.thing)
    if new then f.thing = new else stale[#stale + 1] = f.thing end
  end
  local mine = {}
  for _, fn in ipairs(stale) do
    local info = debug.getinfo(fn, "S")
    if info.source == "@" .. self.path then mine[#mine + 1] = rebind.where(fn) end
  end
  if #mine > 0 then
    table.sort(mine)
    self.warning = "reloaded; handlers made inside a function keep their old code until R: " .. table.concat(mine, ", ")
  end
end

function Runner:check_reload()
  if self:changed() then return self:reload() end
  return false
end

-- call a scene handler by name, guarded; an error stops the simulation until the fix is saved.
-- Returns ok and the handler's first result (true claims an input event).
function Runner:call(name, ...)
  local fn = self.scene[name]
  if not fn or self.error or not self.world then return true end
  active.runner = self
  local ok, res = guard.call(name, fn, ...)
  if not ok then self:fail(res) return false end
  return true, res
end

-- a restart the scene asked for (impetus.restart()), done between steps and events
function Runner:_pending()
  if self.restart_requested then self:restart() end
end

-- one fixed step: update(world, dt), then the world's step, then the contact callbacks
function Runner:step()
  self:_pending()
  if self.error or not self.world then return false end
  if self.history and not self.replaying then self.history:before_step() end
  local dt = self:step_dt()
  if not self:call("update", self.world, dt) then return false end
  if self.restart_requested then -- update asked for a restart: the step ends there (a replay does the same)
    if self.history and not self.replaying then self.history:note_step_restart() end
    self:_pending()
    return true
  end
  if self.before_step then self.before_step(self.world, dt) end -- host hook (the mouse spring on bodies)
  local ok, stepped, warning = guard.call("world:step", self.world.step, self.world, dt)
  if not ok then
    self:fail(stepped)
    return false
  end
  if stepped == false then self.warning = warning end
  self.tick = self.tick + 1
  -- per-body on_contact callbacks and impact sounds: after the step, never inside it
  active.runner = self
  local cok, cerr = guard.call("on_contact", require("impetus.contacts").dispatch, self.world)
  if not cok then
    self:fail(cerr)
    return false
  end
  if not self.replaying then
    local sok, serr = guard.call("impact sounds", require("impetus.sound").dispatch, self.world)
    if not sok then
      self:fail(serr)
      return false
    end
  end
  if self.history and not self.replaying then self.history:after_step() end
  if self.viewer then self.viewer:after_step() end
  self:_pending()
  return true
end

-- advance by a frame's wall time at the fixed step; returns the number of steps taken. The camera
-- follows and shakes by the frame's time even while paused. Catch-up is capped (see MAX_CATCHUP) and
-- by wall_budget seconds of stepping when given; a frame that hits a cap drops the rest of its time and
-- sets `behind` = {ratio = simulated / wall time of that frame, frames = frames since}.
function Runner:advance(frame_dt, wall_budget)
  if not (frame_dt >= 0) or frame_dt == math.huge then frame_dt = 0 end
  local cok, cerr = pcall(self.camera.update, self.camera, frame_dt)
  if not cok and not self.error then self:fail("camera.follow: " .. tostring(cerr)) end
  if self.behind then
    self.behind.frames = self.behind.frames + 1
    if self.behind.frames > 120 then self.behind = nil end
  end
  if self.paused or self.error or not self.world then
    self.accumulator = 0
    return 0
  end
  local dt = self:step_dt()
  local cap = math.min(MAX_CATCHUP, math.max(self.max_steps_per_frame, math.ceil(0.05 / dt)))
  local deadline = wall_budget and core.clock() + wall_budget
  self.accumulator = self.accumulator + frame_dt
  local n = 0
  -- a frame of exactly k steps must take k steps despite rounding: compare with a little slack
  while self.accumulator >= dt * (1 - 1e-9) do
    if n >= cap or (deadline and core.clock() > deadline) then
      self.behind = { ratio = frame_dt > 0 and n * dt / frame_dt or 0, frames = 0 }
      self.accumulator = 0
      break
    end
    self.accumulator = math.max(0, self.accumulator - dt)
    if not self:step() then break end
    n = n + 1
  end
  return n
end

-- ---- input: events from the window or from a spec ----------------------------------------------------------
--
-- e = {type = "keydown", key, isrepeat} | {type = "keyup", key} | {type = "mousedown" | "mouseup", x, y, button}
--   | {type = "mousemove", x, y, dx, dy} | {type = "wheel", dx, dy} | {type = "quit"} | {type = "focuslost"}
-- The scene's handler runs first; the viewer (when attached) acts unless the scene claimed the event.

function Runner:event(e)
  active.runner = self
  local v = self.viewer
  if v and not self.replaying and v:owns(e) then return v:own(e) end -- the timeline and its keys
  if self.history and not self.replaying then self.history:note_event(e) end
  self.input:update(e)
  local t, w = e.type, self.world
  if t == "keydown" then
    local _, res = self:call("keypressed", w, e.key, e.isrepeat or false)
    if v then v:keydown(e, self.scene_keys[e.key] == true or res == true) end
  elseif t == "keyup" then
    self:call("keyreleased", w, e.key)
  elseif t == "mousedown" then
    local _, res = self:call("mousepressed", w, e.x, e.y, e.button)
    if v then v:mousedown(e, res == true) end
  elseif t == "mouseup" then
    self:call("mousereleased", w, e.x, e.y, e.button)
    if v then v:mouseup(e) end
  elseif t == "mousemove" then
    local _, res = self:call("mousemoved", w, e.x, e.y, e.dx or 0, e.dy or 0)
    if v then v:mousemove(e, res == true) end
  elseif t == "wheel" then
    local _, res = self:call("wheelmoved", w, e.dx or 0, e.dy or 0)
    if v then v:wheel(e, res == true) end
  elseif t == "quit" then
    self.quit_requested = true
    if v then v.quit = true end
  elseif t == "focuslost" then
    if v then v:release_drag() v.button = nil end -- a release that happens elsewhere never reports
  end
  self:_pending()
end

-- scripted input for specs. A position is window pixels x, y, or a world point {x, y, z} (projected
-- with the scene's camera); buttons are 1 left, 2 right, 3 middle.
local function pixel(self, x, y, fn)
  if type(x) == "table" then
    local px, py = self.camera:project({ x[1], x[2], x[3] or 0 }, self.input.width, self.input.height)
    if not px then error("runner:" .. fn .. ": the point is behind the camera", 3) end
    return px, py
  end
  if type(x) ~= "number" or type(y) ~= "number" then
    error("runner:" .. fn .. ": give pixel coordinates x, y or a world point {x, y, z}", 3)
  end
  return x, y
end

function Runner:press_key(key) self:event { type = "keydown", key = key, isrepeat = false } end
function Runner:release_key(key) self:event { type = "keyup", key = key } end
function Runner:tap_key(key) self:press_key(key) self:release_key(key) end

function Runner:move_mouse(x, y)
  local px, py = pixel(self, x, y, "move_mouse")
  local i = self.input
  self:event { type = "mousemove", x = px, y = py, dx = px - i.x, dy = py - i.y }
end

-- press (release) a button at a position (moving the mouse there first when it is elsewhere)
function Runner:press_mouse(x, y, button)
  if type(x) == "table" then button = y end
  local px, py = pixel(self, x, y, "press_mouse")
  if px ~= self.input.x or py ~= self.input.y then self:move_mouse(px, py) end
  self:event { type = "mousedown", x = px, y = py, button = button or 1 }
end

function Runner:release_mouse(x, y, button)
  if type(x) == "table" then button = y end
  local px, py = pixel(self, x, y, "release_mouse")
  if px ~= self.input.x or py ~= self.input.y then self:move_mouse(px, py) end
  self:event { type = "mouseup", x = px, y = py, button = button or 1 }
end

function Runner:click(x, y, button)
  if type(x) == "table" then button = y end
  local px, py = pixel(self, x, y, "click")
  self:press_mouse(px, py, button)
  self:release_mouse(px, py, button)
end

function Runner:wheel(dx, dy) self:event { type = "wheel", dx = dx or 0, dy = dy or 0 } end

return Runner
