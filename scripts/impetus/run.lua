-- run: the host's frame loop, in Lua as in LOVE. The C host (render/main.c) calls run.main(arg).
--
--   impetus [options] scene.lua | folder/      (a folder runs its main.lua)
--     --headless          no window: step and print a summary
--     --steps N           steps for --headless and --bench (default 600 and 300)
--     --screenshot PATH   render offscreen and write a PNG after --frames N frames (default 90)
--     --frames N
--     --bench             print "<scene>: <median> ms/step" and the per-stage profile
--     --dt SECONDS        override the scene's fixed step
--     --size WxH          window or screenshot size (default 1280x720)
local core = require "impetus.core"
local Runner = require "impetus.runner"
local Camera = require "impetus.camera"
local guard = require "impetus.guard"
local ui = require "impetus.ui"

local run = {}

local USAGE = [[
usage: impetus [options] scene.lua | folder/
  --headless          run without a window and print a summary
  --steps N           number of steps for --headless / --bench
  --screenshot PATH   render offscreen to a PNG after --frames N frames
  --frames N          frames to simulate before the screenshot (default 90)
  --bench             time the scene: "<scene>: <median> ms/step" and the profile
  --dt SECONDS        fixed physics step (default: the scene's, or 1/60)
  --size WxH          window size (default 1280x720)]]

local function parse(argv)
  local o = { width = 1280, height = 720 }
  local i = 1
  local function value(name)
    i = i + 1
    if argv[i] == nil then error("impetus: " .. name .. " needs a value\n" .. USAGE, 0) end
    return argv[i]
  end
  local function number(name)
    local v = tonumber(value(name))
    if not v then error("impetus: " .. name .. " needs a number\n" .. USAGE, 0) end
    return v
  end
  while argv[i] do
    local a = argv[i]
    if a == "--headless" then o.headless = true
    elseif a == "--bench" then o.bench = true
    elseif a == "--steps" then o.steps = math.floor(number(a))
    elseif a == "--frames" then o.frames = math.floor(number(a))
    elseif a == "--dt" then o.dt = number(a)
    elseif a == "--screenshot" then o.screenshot = value(a)
    elseif a == "--size" then
      local w, h = value(a):match("^(%d+)x(%d+)$")
      if not w then error("impetus: --size takes WxH, e.g. 800x600", 0) end
      o.width, o.height = tonumber(w), tonumber(h)
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

local function median(list)
  local s = {}
  for i, v in ipairs(list) do s[i] = v end
  table.sort(s)
  local n = #s
  if n == 0 then return 0 end
  return n % 2 == 1 and s[(n + 1) // 2] or 0.5 * (s[n // 2] + s[n // 2 + 1])
end

local function scene_name(path) return (path:match("([^/]+)/main%.lua$") or path:match("([^/]+)%.lua$") or path) end

-- step n times, timing each step; returns the list of wall milliseconds
local function timed_steps(r, n)
  local times = {}
  for i = 1, n do
    local t0 = core.clock()
    if not r:step() then break end
    times[i] = (core.clock() - t0) * 1e3
  end
  return times
end

local function summary(r, times, out)
  out = out or io.stdout
  local w = r.world
  out:write(string.format("scene: %s (%s)\n", r.scene.title or scene_name(r.path), r.path))
  out:write(string.format("steps: %d\nsimulated time: %.4f s\n", w.steps, w.time))
  out:write(string.format("wall: %.4f ms/step (median %.4f)\n", #times > 0 and (function()
    local s = 0 for _, t in ipairs(times) do s = s + t end return s / #times end)() or 0, median(times)))
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
  local times = timed_steps(r, o.steps or 600)
  if r.error then return report_error(r) end
  summary(r, times)
  return 0
end

function run.bench(r, o)
  local n = o.steps or 300
  timed_steps(r, math.max(1, n // 10)) -- warm up
  local prof = { total = 0, integrate = 0, collide = 0, evaluations = 0, bodies = 0, contacts = 0, pairs = 0, manifolds = 0 }
  local times, worst_C, worst_residual, most_it, cg_max = {}, 0, 0, 0, 0
  for i = 1, n do
    local t0 = core.clock()
    if not r:step() then break end
    times[i] = (core.clock() - t0) * 1e3
    local p = r.world:profile()
    for k, v in pairs(p) do prof[k] = (prof[k] or 0) + v end
    worst_C, worst_residual = math.max(worst_C, p.constraint_error or 0), math.max(worst_residual, p.cg_residual or 0)
    most_it = math.max(most_it, p.cg_max_iterations or 0)
    cg_max = math.max(cg_max, p.cg_iterations or 0)
  end
  if r.error then return report_error(r) end
  local name = scene_name(r.path)
  print(string.format("%s: %.3f ms/step", name, median(times)))
  print(string.format("  min %.3f  max %.3f  over %d steps, %d particles, %d springs", math.min(table.unpack(times)),
    math.max(table.unpack(times)), #times, r.world.particle_count, r.world.spring_count))
  print(string.format("  profile (mean ms): integrate %.3f  collide %.3f  total %.3f  derivative evaluations %.1f",
    prof.integrate / #times, prof.collide / #times, prof.total / #times, prof.evaluations / #times))
  if (prof.cg_solves or 0) > 0 then
    -- constrained dynamics: CG iterations per solve, and how far the constraints are from C = 0
    print(string.format("  constraints: %d, solves %.3f ms/step, CG iterations per solve %.2f (most %d), " ..
      "worst relative residual %.2g, largest |C| over the run %.3g", r.world.constraint_count,
      prof.constraints / #times, prof.cg_iterations / prof.cg_solves, most_it,
      worst_residual, worst_C))
  end
  if r.world.body_count > 0 then
    print(string.format("  bodies (mean ms): integrate %.3f  broad + narrow phase %.3f  (%d bodies, %.0f pairs, %.0f touching)",
      prof.bodies / #times, prof.contacts / #times, r.world.body_count, prof.pairs / #times, prof.manifolds / #times))
  end
  if r.world.integrator == "implicit" then
    print(string.format("  implicit: forces and matrix %.3f ms  CG iterations mean %.1f max %d  (tolerance %g)",
      prof.forces / #times, prof.cg_iterations / #times, cg_max, r.world.cg_tolerance))
  end
  return 0
end

-- the interactive / offscreen loop
local App = {}
App.__index = App

function App.new(r, gfx, o)
  local self = setmetatable({ r = r, gfx = gfx, o = o, help = false, quit = false, frames = 0, fps = 0,
    step_ms = 0, drag = nil }, App)
  self.camera = Camera.new(r.scene.camera)
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

function App:restart()
  self:release_drag()
  self.r:restart()
end

function App:release_drag()
  if self.drag and self.drag.spring and self.drag.spring:valid() and not self.r.world.locked then self.drag.spring:destroy() end
  self.drag = nil
  self.r.before_step = nil
end

-- ---- dragging rigid bodies: a damped spring from a point fixed in the body to the cursor ----------
local function mat_vec(R, v) return { R[1][1] * v[1] + R[1][2] * v[2] + R[1][3] * v[3],
  R[2][1] * v[1] + R[2][2] * v[2] + R[2][3] * v[3], R[3][1] * v[1] + R[3][2] * v[2] + R[3][3] * v[3] } end
local function mat_tvec(R, v) return { R[1][1] * v[1] + R[2][1] * v[2] + R[3][1] * v[3],
  R[1][2] * v[1] + R[2][2] * v[2] + R[3][2] * v[3], R[1][3] * v[1] + R[2][3] * v[2] + R[3][3] * v[3] } end

-- the grabbed point of the body in world space, and its velocity v + omega x r
function App:grab_point()
  local b = self.drag.body
  local x, R = b.center_of_mass, b.rotation
  local r = mat_vec(R, self.drag["local"])
  local p = { x[1] + r[1], x[2] + r[2], x[3] + r[3] }
  local v, w = b.velocity, b.angular_velocity
  return p, { v[1] + w[2] * r[3] - w[3] * r[2], v[2] + w[3] * r[1] - w[1] * r[3], v[3] + w[1] * r[2] - w[2] * r[1] }
end

function App:grab_body(hit, t)
  local b = hit.body
  local x = b.center_of_mass
  local rel = { hit.point[1] - x[1], hit.point[2] - x[2], hit.point[3] - x[3] }
  self.drag = { body = b, depth = t, ["local"] = mat_tvec(b.rotation, rel) }
  self.drag.target = hit.point
  -- before every fixed step: f = ks (target - p) - kd v_p at the grabbed point, critically damped
  self.r.before_step = function()
    if not (self.drag and self.drag.body and b:valid()) then return end
    local m = b.mass
    local ks = 60 * m
    local kd = 2 * math.sqrt(ks * m)
    local p, vp = self:grab_point()
    local g = self.drag.target
    b:apply_force({ ks * (g[1] - p[1]) - kd * vp[1], ks * (g[2] - p[2]) - kd * vp[2], ks * (g[3] - p[3]) - kd * vp[3] }, p)
  end
end

-- nearest particle to the ray under the mouse, within a few radii
function App:pick(x, y)
  local o, d = self.gfx.unproject(x, y)
  local best, best_t, best_dist = nil, nil, math.huge
  for _, p in ipairs(self.r.world:particles()) do
    if not p.fixed then
      local q = p.position
      local rel = { q[1] - o[1], q[2] - o[2], q[3] - o[3] }
      local t = rel[1] * d[1] + rel[2] * d[2] + rel[3] * d[3]
      if t > 0 then
        local dist = math.sqrt(math.max(0, rel[1] ^ 2 + rel[2] ^ 2 + rel[3] ^ 2 - t * t))
        if dist < math.max(3 * p.radius, 0.15) and dist < best_dist then best, best_t, best_dist = p, t, dist end
      end
    end
  end
  return best, best_t
end

function App:drag_point(x, y)
  local o, d = self.gfx.unproject(x, y)
  local t = self.drag.depth
  return { o[1] + d[1] * t, o[2] + d[2] * t, o[3] + d[3] * t }
end

function App:event(e)
  local r = self.r
  if e.type == "quit" then self.quit = true
  elseif e.type == "keydown" then
    local k = e.key
    if k == "escape" then self.quit = true
    elseif k == "f1" then self.help = not self.help
    elseif k == "space" then r.paused = not r.paused
    elseif (k == "s" or k == "right") and r.paused then r:step()
    elseif k == "r" then self:restart()
    elseif k == "f12" then self.want_screenshot = true
    elseif k == "f2" or k == "f3" or k == "f4" or k == "f5" then
      local name = ({ f2 = "contacts", f3 = "aabbs", f4 = "centers", f5 = "velocities" })[k]
      self.gfx.debug { [name] = not self.gfx.debug()[name] }
    end
    if r.world and not r.error then r:call("keypressed", r.world, k) end
  elseif e.type == "keyup" then
    if r.world and not r.error then r:call("keyreleased", r.world, e.key) end
  elseif e.type == "mousedown" then
    self.button = e.button
    if e.button == 1 and r.world and not r.error and not r.world.locked then
      local p, t = self:pick(e.x, e.y)
      -- a body under the cursor nearer than the nearest particle takes the drag
      local o, d = self.gfx.unproject(e.x, e.y)
      local far = 1000
      local hit = r.world:raycast(o, { o[1] + d[1] * far, o[2] + d[2] * far, o[3] + d[3] * far })
      if hit and hit.body and not hit.body.static and (not p or hit.fraction * far < t) then
        self:grab_body(hit, hit.fraction * far)
        p = nil
      end
      if p then
        local m = p.mass
        local ks = 60 * m
        self.drag = { particle = p, depth = t }
        self.drag.spring = r.world:spring(p, self:drag_point(e.x, e.y), { ks = ks, kd = 2 * math.sqrt(ks * m), rest = 0 })
      end
    end
  elseif e.type == "mouseup" then
    self.button = nil
    self:release_drag()
  elseif e.type == "mousemove" then
    if self.drag and self.drag.body then
      self.drag.target = self:drag_point(e.x, e.y)
    elseif self.drag then
      if self.drag.spring:valid() then self.drag.spring.anchor = self:drag_point(e.x, e.y) else self.drag = nil end
    elseif e.buttons ~= 0 then
      local _, h = self.gfx.size()
      if self.button == 1 then self.camera:orbit(e.dx, e.dy) else self.camera:pan(e.dx, e.dy, h) end
    end
  elseif e.type == "wheel" then
    self.camera:zoom(e.dy)
  end
end

function App:draw()
  local gfx, r = self.gfx, self.r
  gfx.begin_frame(r.scene.background or { 0.12, 0.13, 0.15 })
  self.camera:apply(gfx)
  if r.scene.grid ~= false then gfx.grid(20, 1, 0) end
  if r.world then
    gfx.world(r.world)
    if self.drag and self.drag.body and self.drag.body:valid() then
      gfx.line(self:grab_point(), self.drag.target, { 1, 0.9, 0.3, 1 })
    end
    r:call("draw", r.world, gfx)
    ui.hud(gfx, {
      title = r.scene.title or scene_name(r.path), time = r.world.time, step_ms = self.step_ms, fps = self.fps,
      particles = r.world.particle_count, bodies = r.world.body_count, paused = r.paused, warning = r.warning,
    })
  end
  if self.help then ui.help(gfx) end
  if r.error then ui.error_screen(gfx, r.error) end
  gfx.end_frame()
end

function App:loop()
  local gfx, r = self.gfx, self.r
  local last, last_check, fps_time, fps_frames = gfx.time(), gfx.time(), gfx.time(), 0
  while not self.quit do
    for _, e in ipairs(gfx.poll()) do self:event(e) end
    local now = gfx.time()
    if now - last_check > 0.25 then
      last_check = now
      if r:changed() then
        self:release_drag()
        r:reload()
        self:apply_debug()
        if r.scene.camera and not self.camera_locked then self.camera_locked = true end
      end
    end
    local t0 = core.clock()
    local n = r:advance(now - last)
    if n > 0 then self.step_ms = (core.clock() - t0) * 1e3 / n end
    last = now
    self:draw()
    if self.want_screenshot then
      self.want_screenshot = false
      self.shots = (self.shots or 0) + 1
      local file = string.format("impetus-%s-%d.png", scene_name(r.path), self.shots)
      local ok, err = gfx.screenshot(file)
      r.warning = ok and ("saved " .. file) or ("screenshot failed: " .. tostring(err))
    end
    gfx.present()
    fps_frames = fps_frames + 1
    if now - fps_time >= 1 then self.fps, fps_frames, fps_time = fps_frames, 0, now end
  end
end

-- simulate `frames` frames of 1/60 s, draw the last one and write the PNG
function App:screenshot(path, frames)
  local r = self.r
  local times = {}
  for _ = 1, frames do
    local t0 = core.clock()
    local n = r:advance(1 / 60)
    if n > 0 then times[#times + 1] = (core.clock() - t0) * 1e3 / n end
  end
  self.step_ms = median(times)
  self:draw()
  local ok, err = self.gfx.screenshot(path)
  if not ok then error("impetus: cannot write " .. path .. ": " .. tostring(err), 0) end
  return times
end

local function has_display()
  local d, w = os.getenv("DISPLAY"), os.getenv("WAYLAND_DISPLAY")
  return (d and d ~= "") or (w and w ~= "") or os.getenv("SDL_VIDEODRIVER") ~= nil
end

function run.main(argv)
  local o = parse(argv)
  if o.help or not o.scene then
    print(USAGE)
    return o.help and 0 or 2
  end
  local path = resolve_scene(o.scene)
  local f = io.open(path, "r")
  if not f then
    io.stderr:write("impetus: cannot open scene " .. path .. "\n")
    return 2
  end
  f:close()
  local r = Runner.new(path, { dt = o.dt })
  r:start()
  if o.bench then return run.bench(r, o) end
  if o.headless then return run.headless(r, o) end

  local fallback = false
  if not o.screenshot and not has_display() then
    fallback = true
    o.screenshot = "impetus-" .. scene_name(path) .. ".png"
    io.stderr:write("impetus: no display; simulating offscreen and writing a screenshot\n")
  end
  local gfx = require "impetus.gfx"
  local ok, driver, renderer = gfx.open { title = "impetus: " .. (r.scene.title or scene_name(path)),
    width = o.width, height = o.height, offscreen = o.screenshot ~= nil }
  if not ok then
    io.stderr:write("impetus: " .. tostring(driver) .. "\n")
    return 1
  end
  local app = App.new(r, gfx, o)
  local status = 0
  if o.screenshot then
    local times = app:screenshot(o.screenshot, o.frames or (fallback and 180 or 90))
    summary(r, times)
    print(string.format("screenshot: %s (%dx%d, %s, %s)", o.screenshot, o.width, o.height, driver, renderer))
    if r.error then status = report_error(r) end
  else
    app:loop()
  end
  gfx.close()
  return status
end

run.parse = parse
run.App = App -- for specs: the interactive loop driven by synthetic events
run.median = median
return run
