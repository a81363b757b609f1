-- runner: one scene, its world, the fixed-step clock and hot reload. No window here: the host's
-- run loop (run.lua) and the specs both drive a runner.
--
-- A scene file returns a table: title, setup(world), update(world, dt), keypressed(world, key), keyreleased(world, key),
-- draw(world, gfx), on_reload(world), and settings: dt (fixed step, default 1/60), camera,
-- background, grid. Saving the file (or a module it required from its own folder) re-executes it
-- and swaps the handlers without touching the world.
local core = require "impetus.core"
local guard = require "impetus.guard"

local Runner = {}
Runner.__index = Runner

local function dirname(path) return path:match("^(.*)[/\\]") or "." end

-- mtime and size of a file as one comparable string ("" when missing)
local function signature(path)
  local t, size = core.mtime(path)
  return t and string.format("%.9f:%d", t, size) or ""
end

function Runner.new(path, opts)
  opts = opts or {}
  if type(path) ~= "string" then error("runner: argument 'path' must be a file name", 2) end
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
    warning = nil,         -- last NaN-guard report
    max_steps_per_frame = opts.max_steps_per_frame or 8,
    needs_setup = true,
    reloads = 0,
  }, Runner)
  return self
end

-- the scene's environment: globals fall through to _G; require finds modules next to the scene.
-- One environment lives as long as the runner, so globals a scene sets survive a reload.
function Runner:_env()
  if self.env then return self.env end
  local env = setmetatable({}, { __index = _G })
  self.env = env
  local search = self.dir .. "/?.lua;" .. self.dir .. "/?/init.lua"
  env.require = function(name)
    local file = package.searchpath(name, search)
    if file then
      self.modules[name] = file
      if not package.loaded[name] then
        local chunk, err = loadfile(file, "t", env)
        if not chunk then error(err, 2) end
        package.loaded[name] = chunk(name, file) or true
      end
      return package.loaded[name]
    end
    return require(name)
  end
  return env
end

-- compile and run the scene file; returns the scene table or nil, message
function Runner:_load()
  for name in pairs(self.modules) do package.loaded[name] = nil end
  self.modules = {}
  local env = self:_env()
  local chunk, err = loadfile(self.path, "t", env)
  if not chunk then return nil, "syntax error: " .. err end
  local ok, scene = guard.call("loading " .. self.path, chunk)
  if not ok then return nil, scene end
  if type(scene) ~= "table" then
    return nil, self.path .. " must return a scene table (got " .. type(scene) .. ")"
  end
  return scene
end

function Runner:_stamp()
  self.stamps = { [self.path] = signature(self.path) }
  for _, file in pairs(self.modules) do self.stamps[file] = signature(file) end
end

function Runner:fail(message)
  self.error = message
end

-- load the scene, make a fresh world and run setup(world); on error the runner waits for a fix
function Runner:start()
  local scene, err = self:_load()
  self:_stamp()
  if not scene then return self:fail(err) end
  self.scene = scene
  return self:restart()
end

-- a fresh world and setup again (key R)
function Runner:restart()
  self.world = core.world()
  self.accumulator = 0
  self.error = nil
  self.warning = nil
  self.needs_setup = false
  if self.scene.setup then
    local ok, err = guard.call("setup", self.scene.setup, self.world)
    if not ok then
      self.needs_setup = true
      return self:fail(err)
    end
  end
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

-- re-execute the scene file and swap its handlers, keeping the world (hot reload)
function Runner:reload()
  local scene, err = self:_load()
  self:_stamp()
  if not scene then
    self:fail(err)
    return false
  end
  self.scene = scene
  self.reloads = self.reloads + 1
  if self.needs_setup or not self.world then return self:restart() end
  self.error = nil
  if scene.on_reload then
    local ok, e = guard.call("on_reload", scene.on_reload, self.world)
    if not ok then self:fail(e) return false end
  end
  return true
end

function Runner:check_reload()
  if self:changed() then return self:reload() end
  return false
end

-- call a scene handler by name, guarded; an error stops the simulation until the fix is saved
function Runner:call(name, ...)
  local fn = self.scene[name]
  if not fn or self.error then return true end
  local ok, err = guard.call(name, fn, ...)
  if not ok then self:fail(err) end
  return ok
end

-- one fixed step: update(world, dt), then the world's step
function Runner:step()
  if self.error or not self.world then return false end
  local dt = self:step_dt()
  if not self:call("update", self.world, dt) then return false end
  if self.before_step then self.before_step(self.world, dt) end -- host hook (the mouse spring on bodies)
  local ok, stepped, warning = guard.call("world:step", self.world.step, self.world, dt)
  if not ok then
    self:fail(stepped)
    return false
  end
  if stepped == false then self.warning = warning end
  -- per-body on_contact callbacks: after the step, never inside it
  local cok, cerr = guard.call("on_contact", require("impetus.contacts").dispatch, self.world)
  if not cok then
    self:fail(cerr)
    return false
  end
  return true
end

-- advance by a frame's wall time at the fixed step; returns the number of steps taken
function Runner:advance(frame_dt)
  if self.paused or self.error or not self.world then
    self.accumulator = 0
    return 0
  end
  local dt = self:step_dt()
  -- catch up at most max_steps_per_frame steps, or 50 ms of simulated time for scenes with tiny
  -- steps, so a slow frame cannot snowball into ever slower ones
  local budget = math.max(self.max_steps_per_frame * dt, 0.05)
  self.accumulator = math.min(self.accumulator + frame_dt, budget)
  local n = 0
  -- a frame of exactly k steps must take k steps despite rounding: compare with a little slack
  while self.accumulator >= dt * (1 - 1e-9) do
    self.accumulator = math.max(0, self.accumulator - dt)
    if not self:step() then break end
    n = n + 1
  end
  return n
end

return Runner
