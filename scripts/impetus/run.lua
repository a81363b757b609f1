-- run: the host's frame loop, in Lua as in LOVE. The C host (render/main.c) calls run.main(arg).
--
--   impetus [options] scene.lua | folder/      (a folder runs its main.lua)
--     --headless          no window: step and print a summary
--     --steps N           steps for --headless and --bench (default 600 and 300)
--     --screenshot PATH   render offscreen and write a PNG after --frames N frames (default 90)
--     --frames N          with a window: quit after N frames
--     --bench             print "<scene>: <median> ms/step" and the per-stage profile
--     --dt SECONDS        override the scene's fixed step
--     --size WxH          window or screenshot size (default 1280x720)
--     --seed N            impetus.random's seed (default: the time)
--     --record PATH       write the run to PATH (a recording: record.lua) and print its final state hash
--     --replay PATH       play a recording back (window, --headless or --screenshot) and print the hash
--
-- The pieces: runner.lua (scene, world, clock, reload, input dispatch), viewer.lua (the host's keys,
-- mouse and overlays), history.lua (the past: timeline, record and replay), camera.lua, input.lua,
-- drag.lua, sound.lua, stats.lua (bounded timings).
local core = require "impetus.core"
local Runner = require "impetus.runner"
local Viewer = require "impetus.viewer"
local Stats = require "impetus.stats"
local settings = require "impetus.settings"
local sound = require "impetus.sound"

local run = {}

local USAGE = [[
usage: impetus [options] scene.lua | folder/
  --headless          run without a window and print a summary
  --steps N           number of steps for --headless / --bench
  --screenshot PATH   render offscreen to a PNG after --frames N frames
  --frames N          frames to simulate before the screenshot (default 90); with a window: quit after N
  --bench             time the scene: "<scene>: <median> ms/step" and the profile
  --dt SECONDS        fixed physics step (default: the scene's, or 1/60)
  --size WxH          window size (default 1280x720)
  --seed N            impetus.random's seed (default: the time)
  --record PATH       record the run (every step, input event and reload) to PATH; prints the final state hash
  --replay PATH       play a recording back, in a window or with --headless / --screenshot; prints the hash]]

local function parse(argv)
  local o = { width = 1280, height = 720 }
  local i = 1
  local function value(name)
    i = i + 1
    if argv[i] == nil then error("impetus: " .. name .. " needs a value\n" .. USAGE, 0) end
    return argv[i]
  end
  local function count(name)
    local v = math.tointeger(tonumber(value(name)))
    if not v or v < 1 then error("impetus: " .. name .. " needs a whole number >= 1\n" .. USAGE, 0) end
    return v
  end
  while argv[i] do
    local a = argv[i]
    if a == "--headless" then o.headless = true
    elseif a == "--bench" then o.bench = true
    elseif a == "--steps" then o.steps = count(a)
    elseif a == "--frames" then o.frames = count(a)
    elseif a == "--dt" then
      local v = tonumber(value(a))
      local ok, err = pcall(settings.check_dt, v, "impetus: --dt")
      if not ok then error(err, 0) end
      o.dt = v
    elseif a == "--screenshot" then o.screenshot = value(a)
    elseif a == "--record" then o.record = value(a)
    elseif a == "--replay" then o.replay = value(a)
    elseif a == "--seed" then
      local v = math.tointeger(tonumber(value(a)))
      if not v then error("impetus: --seed needs a whole number\n" .. USAGE, 0) end
      o.seed = v
    elseif a == "--size" then
      local w, h = value(a):match("^(%d+)x(%d+)$")
      w, h = tonumber(w), tonumber(h)
      if not w or w < 1 or h < 1 or w > 16384 or h > 16384 then error("impetus: --size takes WxH, e.g. 800x600", 0) end
      o.width, o.height = w, h
    elseif a == "--help" or a == "-h" then o.help = true
    elseif a:sub(1, 2) == "--" then error("impetus: unknown option " .. a .. "\n" .. USAGE, 0)
    else o.scene = a end
    i = i + 1
  end
  return o
end

local function resolve_scene(path)
  if not path then return nil end
  local f = io.open(path .. "/main.lua", "r")
  if f then f:close() return (path:gsub("/$", "")) .. "/main.lua" end
  return path
end

local function scene_name(path) return (path:match("([^/]+)/main%.lua$") or path:match("([^/]+)%.lua$") or path) end

-- step n times (fewer when the scene fails or quits), timing each step into bounded stats
local function timed_steps(r, n, stats)
  stats = stats or Stats.new()
  for _ = 1, n do
    if r.quit_requested then break end
    local t0 = core.clock()
    if not r:step() then break end
    stats:add((core.clock() - t0) * 1e3)
  end
  return stats
end

local function summary(r, stats, out)
  out = out or io.stdout
  local w = r.world
  out:write(string.format("scene: %s (%s)\n", r.scene.title or scene_name(r.path), r.path))
  if not w then return end
  out:write(string.format("steps: %d\nsimulated time: %.4f s\n", w.steps, w.time))
  out:write(string.format("wall: %.4f ms/step (median %.4f)\n", stats:mean(), stats:median()))
  out:write(string.format("particles: %d  springs: %d  resting contacts: %d\n", w.particle_count, w.spring_count,
    w.contact_count))
  if w.body_count > 0 then
    out:write(string.format("bodies: %d  touching shape pairs: %d\n", w.body_count, w.manifold_count))
  end
  out:write(string.format("energy: kinetic %.6g J, potential %.6g J\n", w:kinetic_energy(), w:potential_energy()))
  if r.warning then out:write("warning: " .. r.warning .. "\n") end
end

local function report_error(r)
  io.stderr:write("impetus: " .. r.error .. "\n")
  return 1
end

function run.headless(r, o)
  local stats = timed_steps(r, o.steps or 600)
  if r.error then return report_error(r) end
  summary(r, stats)
  return 0
end

function run.bench(r, o)
  if r.error then return report_error(r) end
  local n = o.steps or 300
  timed_steps(r, math.max(1, n // 10)) -- warm up
  local prof = { total = 0, integrate = 0, collide = 0, evaluations = 0, bodies = 0, contacts = 0, pairs = 0, manifolds = 0 }
  local stats, worst_C, worst_residual, most_it, cg_max = Stats.new(), 0, 0, 0, 0
  for _ = 1, n do
    local t0 = core.clock()
    if not r:step() then break end
    stats:add((core.clock() - t0) * 1e3)
    local p = r.world:profile()
    for k, v in pairs(p) do prof[k] = (prof[k] or 0) + v end
    worst_C, worst_residual = math.max(worst_C, p.constraint_error or 0), math.max(worst_residual, p.cg_residual or 0)
    most_it = math.max(most_it, p.cg_max_iterations or 0)
    cg_max = math.max(cg_max, p.cg_iterations or 0)
  end
  if r.error then return report_error(r) end
  local name, steps = scene_name(r.path), math.max(1, stats.n)
  print(string.format("%s: %.3f ms/step", name, stats:median()))
  print(string.format("  min %.3f  max %.3f  over %d steps, %d particles, %d springs", stats.min, stats.max, stats.n,
    r.world.particle_count, r.world.spring_count))
  print(string.format("  profile (mean ms): integrate %.3f  collide %.3f  total %.3f  derivative evaluations %.1f",
    prof.integrate / steps, prof.collide / steps, prof.total / steps, prof.evaluations / steps))
  if (prof.cg_solves or 0) > 0 then
    -- constrained dynamics: CG iterations per solve, and how far the constraints are from C = 0
    print(string.format("  constraints: %d, solves %.3f ms/step, CG iterations per solve %.2f (most %d), " ..
      "worst relative residual %.2g, largest |C| over the run %.3g", r.world.constraint_count,
      prof.constraints / steps, prof.cg_iterations / prof.cg_solves, most_it,
      worst_residual, worst_C))
  end
  if r.world.body_count > 0 then
    print(string.format("  bodies (mean ms): integrate %.3f  broad + narrow phase %.3f  (%d bodies, %.0f pairs, %.0f touching)",
      prof.bodies / steps, prof.contacts / steps, r.world.body_count, prof.pairs / steps, prof.manifolds / steps))
  end
  if r.world.integrator == "implicit" then
    print(string.format("  implicit: forces and matrix %.3f ms  CG iterations mean %.1f max %d  (tolerance %g)",
      prof.forces / steps, prof.cg_iterations / steps, cg_max, r.world.cg_tolerance))
  end
  return 0
end

-- ---- the window (or offscreen) loop -------------------------------------------------------------------------
local App = {}
App.__index = App

local DEFAULT_BACKGROUND = { 0.12, 0.13, 0.15 }
-- wall time a frame may spend stepping before it drops the rest of its backlog
local STEP_BUDGET = 0.25

function App.new(r, gfx, o)
  local self = setmetatable({ r = r, gfx = gfx, o = o or {}, frames = 0, fps = nil, step_ms = 0 }, App)
  self.viewer = Viewer.new(r, gfx)
  self:apply_debug()
  return self
end

-- a scene's `debug = {contacts = true, ...}` switches gfx.world's debug views on at start and reload
function App:apply_debug()
  local d = self.r.scene and self.r.scene.debug
  if type(d) == "table" and self.gfx.debug then
    local ok, err = pcall(self.gfx.debug, d)
    if not ok then self.r:fail("scene.debug: " .. tostring(err)) end
  end
end

-- the window's size in pixels for the mouse and the camera
function App:sync_size()
  local w, h = self.gfx.size()
  if w and w > 0 and h > 0 then self.r.input.width, self.r.input.height = w, h end
end

function App:draw()
  local gfx, r = self.gfx, self.r
  self:sync_size()
  gfx.begin_frame(r.scene.background or DEFAULT_BACKGROUND)
  r.camera:apply(gfx)
  if gfx.shadows then gfx.shadows(r.scene.shadows ~= false) end
  if self.viewer:grid_shown() then gfx.grid(20, 1, 0) end
  if r.world then
    gfx.world(r.world)
    r:call("draw", r.world, gfx)
  end
  self.viewer:draw(gfx, { title = r.scene.title or scene_name(r.path), fps = self.fps, step_ms = self.step_ms })
  gfx.end_frame()
end

function App:loop()
  if self.player then return self:replay_loop() end
  local gfx, r, v = self.gfx, self.r, self.viewer
  local host = package.loaded["impetus.host"]
  local last, last_check, fps_time, fps_frames = gfx.time(), gfx.time(), gfx.time(), 0
  local frames = 0
  while not (v.quit or r.quit_requested) do
    if host and host.interrupted() then break end
    self:sync_size()
    for _, e in ipairs(gfx.poll()) do r:event(e) end
    local now = gfx.time()
    if now - last_check > 0.25 then
      last_check = now
      if r:changed() then
        v:release_drag()
        r:reload()
        self:apply_debug()
      end
    end
    v:update()
    local t0 = core.clock()
    local n = r:advance(now - last, STEP_BUDGET)
    if n > 0 then self.step_ms = (core.clock() - t0) * 1e3 / n end
    last = now
    self:draw()
    if v.want_screenshot then
      v.want_screenshot = false
      self.shots = (self.shots or 0) + 1
      local file = string.format("impetus-%s-%d.png", scene_name(r.path), self.shots)
      local ok, err = gfx.screenshot(file)
      r.warning = ok and ("saved " .. file) or ("screenshot failed: " .. tostring(err))
    end
    gfx.present()
    fps_frames = fps_frames + 1
    frames = frames + 1
    if self.o.frames and frames >= self.o.frames then break end
    if now - fps_time >= 1 then self.fps, fps_frames, fps_time = fps_frames, 0, now end
  end
end

-- a recording played in the window at its pace: Esc (or closing the window) stops it; the camera is the
-- recorded one
function App:replay_loop()
  local gfx, p = self.gfx, self.player
  local last = gfx.time()
  while true do
    local host = package.loaded["impetus.host"]
    if host and host.interrupted() then break end
    local quit = false
    for _, e in ipairs(gfx.poll()) do
      if e.type == "quit" or (e.type == "keydown" and e.key == "escape") then quit = true end
      if e.type == "keydown" and e.key == "f1" then self.viewer.help = not self.viewer.help end
    end
    if quit then break end
    local now = gfx.time()
    p:advance(now - last)
    last = now
    if p:done() and not self.replay_status then -- the end: its hash now, the last frame until Esc
      self.replay_status = self.on_replay_end()
      self.r.warning = "replay finished (Esc quits)"
    end
    self:draw()
    gfx.present()
    if self.o.frames then
      self.frames_left = (self.frames_left or self.o.frames) - 1
      if self.frames_left <= 0 then break end
    end
  end
end

-- simulate `frames` frames of 1/60 s, draw the last one and write the PNG; the HUD shows no fps
-- (none was measured). Returns the step timings.
function App:screenshot(path, frames)
  local r = self.r
  local stats = Stats.new()
  for _ = 1, frames do
    local t0 = core.clock()
    local n = r:advance(1 / 60)
    if n > 0 then stats:add((core.clock() - t0) * 1e3 / n) end
    if r.quit_requested then break end
  end
  self.step_ms = stats:median()
  self:draw()
  local ok, err = self.gfx.screenshot(path)
  if not ok then error("impetus: cannot write " .. path .. ": " .. tostring(err), 0) end
  return stats
end

local function has_display()
  local d, w = os.getenv("DISPLAY"), os.getenv("WAYLAND_DISPLAY")
  return (d and d ~= "") or (w and w ~= "") or os.getenv("SDL_VIDEODRIVER") ~= nil
end

-- the hash line a recording and its replay print
local function print_hash(r, recorded)
  if not r.world then return end
  local h = require("impetus.state_hash").hash(r.world)
  print("state hash: " .. h)
  if recorded and recorded ~= h then
    io.stderr:write("impetus: the replay's final state differs from the recording's (recorded " .. recorded .. ")\n")
    return 1
  end
  return 0
end

-- --replay PATH: headless, to a screenshot, or in a window at the recorded pace
local function replay(o)
  local record = require "impetus.record"
  local rec = record.load(o.replay)
  local player = record.player(rec, { viewer = true })
  local r = player.runner
  if o.headless then
    player:finish()
    if r.error then return report_error(r) end
    summary(r, Stats.new())
    return print_hash(r, rec.hash)
  end
  local gfx = require("impetus.draw").extend(require "impetus.gfx")
  local ok, driver = gfx.open { title = "impetus replay: " .. (r.scene.title or scene_name(r.path)),
    width = rec.size and rec.size[1] or o.width, height = rec.size and rec.size[2] or o.height,
    offscreen = o.screenshot ~= nil or not has_display() }
  if not ok then
    io.stderr:write("impetus: " .. tostring(driver) .. "\n")
    return 1
  end
  local app = App.new(r, gfx, o)
  app.player = player
  app.on_replay_end = function() return r.error and report_error(r) or print_hash(r, rec.hash) end
  local status
  if o.screenshot or not has_display() then
    player:finish()
    app:draw()
    local path = o.screenshot or ("impetus-replay-" .. scene_name(r.path) .. ".png")
    local sok, err = gfx.screenshot(path)
    if not sok then io.stderr:write("impetus: cannot write " .. path .. ": " .. tostring(err) .. "\n") end
    summary(r, Stats.new())
    print(string.format("screenshot: %s", path))
    status = app.on_replay_end()
  else
    app:loop()
    status = app.replay_status
    if not status then
      io.stderr:write("impetus: the replay was stopped before its end\n")
      status = print_hash(r)
    end
  end
  gfx.close()
  return status
end

function run.main(argv)
  local o = parse(argv)
  if o.help or (not o.scene and not o.replay) then
    print(USAGE)
    return o.help and 0 or 2
  end
  if o.replay then return replay(o) end
  if o.record and o.bench then error("impetus: --record and --bench do not go together", 0) end
  local path = resolve_scene(o.scene)
  local f = io.open(path, "r")
  if not f then
    io.stderr:write("impetus: cannot open scene " .. path .. "\n")
    return 2
  end
  f:close()
  local window = not (o.headless or o.bench)
  local r = Runner.new(path, { dt = o.dt, size = { o.width, o.height }, seed = o.seed })
  if o.record then require("impetus.record").start(r) -- (its history keeps the whole log, and serves the viewer too)
  elseif window then require("impetus.history").new(r) end
  r:start()
  if r.history and not o.record and not settings.viewer(r.scene).timeline then r.history = nil end -- (viewer.timeline = false)
  if o.bench then return run.bench(r, o) end
  if o.headless then
    local status = run.headless(r, o)
    if o.record then
      require("impetus.record").save(r, o.record)
      status = math.max(status, print_hash(r))
    end
    return status
  end

  local fallback = false
  if not o.screenshot and not has_display() then
    fallback = true
    o.screenshot = "impetus-" .. scene_name(path) .. ".png"
    io.stderr:write("impetus: no display; simulating offscreen and writing a screenshot\n")
  end
  local gfx = require("impetus.draw").extend(require "impetus.gfx")
  local ok, driver, renderer = gfx.open { title = "impetus: " .. (r.scene.title or scene_name(path)),
    width = o.width, height = o.height, offscreen = o.screenshot ~= nil }
  if not ok then
    io.stderr:write("impetus: " .. tostring(driver) .. "\n")
    if r.error then report_error(r) end
    return 1
  end
  local app = App.new(r, gfx, o)
  local status = 0
  if o.screenshot then
    local stats = app:screenshot(o.screenshot, o.frames or (fallback and 180 or 90))
    summary(r, stats)
    print(string.format("screenshot: %s (%dx%d, %s, %s)", o.screenshot, o.width, o.height, driver, renderer))
    if r.error then status = report_error(r) end
  else
    sound.allow(function(message) r.warning = message end)
    app:loop()
    sound.close()
    if r.error then status = report_error(r) end
  end
  if o.record then
    require("impetus.record").save(r, o.record)
    print_hash(r)
  end
  gfx.close()
  return status
end

run.parse = parse
run.App = App -- for specs: the window loop driven by synthetic events
run.summary = summary
run.timed_steps = timed_steps
return run
