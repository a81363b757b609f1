-- camera: the view of a scene. A perspective camera (eye, target, field of view) for 3D scenes and an
-- orthographic one looking down -z at the x-y plane (centre, height) for 2D ones; mouse orbit, pan
-- and zoom for the viewer; follow a body with exponential smoothing; shake; reset to the scene's
-- camera. The projection math (ray under a pixel, pixel of a point) is done here, in the same way as
-- render_view.c does it, so picking and mouse-to-world work the same headless, in specs and in a window.
--
--   spec: {eye = {x, y, z}, target = {x, y, z}, fov = radians (0.9)}
--      or {mode = "2d", center = {x, y}, height = metres visible top to bottom (10)}
local Camera = {}
Camera.__index = Camera

local DEFAULT_3D = { eye = { 6, 4, 10 }, target = { 0, 1, 0 }, fov = 0.9 }

local function sub(a, b) return { a[1] - b[1], a[2] - b[2], a[3] - b[3] } end
local function dot(a, b) return a[1] * b[1] + a[2] * b[2] + a[3] * b[3] end
local function len(a) return math.sqrt(dot(a, a)) end
local function cross(a, b) return { a[2] * b[3] - a[3] * b[2], a[3] * b[1] - a[1] * b[3], a[1] * b[2] - a[2] * b[1] } end
local function normalize(a)
  local l = len(a)
  if l > 0 then return { a[1] / l, a[2] / l, a[3] / l }, l end
  return { a[1], a[2], a[3] }, 0
end
local args = require "impetus.args"
local function finite(x) return type(x) == "number" and x == x and x > -math.huge and x < math.huge end

-- a finite vector of n (2 or 3) numbers from {x, y[, z]}; z defaults to 0 for 2-vectors (a 2D centre
-- may carry a z, which it ignores); any other entry is an error
local function vector(v, n, what)
  if type(v) ~= "table" then error(string.format("%s must be a vector {x, y%s} (got %s)", what, n == 3 and ", z" or "", type(v)), 0) end
  local stray = args.stray(v, 3, true)
  if stray then error(string.format("%s must be a vector {x, y%s}: %s", what, n == 3 and ", z" or "", stray), 0) end
  local x, y, z = v[1] or v.x, v[2] or v.y, v[3] or v.z or 0
  if not (finite(x) and finite(y) and finite(z)) then
    error(string.format("%s must be a vector of finite numbers {x, y%s}", what, n == 3 and ", z" or ""), 0)
  end
  return { x, y, z }
end

local KEYS = { mode = true, eye = true, target = true, fov = true, center = true, height = true }

-- check a camera table and return it normalized: {mode = "3d", eye, target, fov} or
-- {mode = "2d", center, height}; raises an error naming `what` and the field
function Camera.check(spec, what)
  what = what or "camera"
  if spec == nil then spec = {} end
  if type(spec) ~= "table" then error(string.format("%s must be a table (got %s)", what, type(spec)), 0) end
  for k in pairs(spec) do
    if not KEYS[k] then
      error(string.format("%s: unknown field '%s' (known: mode, eye, target, fov, center, height)", what, tostring(k)), 0)
    end
  end
  local mode = spec.mode or ((spec.center or spec.height) and not (spec.eye or spec.target) and "2d") or "3d"
  if mode ~= "2d" and mode ~= "3d" then
    error(string.format("%s: field 'mode' must be \"2d\" or \"3d\" (got %s)", what, tostring(spec.mode)), 0)
  end
  if mode == "2d" then
    if spec.eye or spec.target or spec.fov then
      error(string.format("%s: a 2d camera takes center and height, not eye, target or fov", what), 0)
    end
    local c = vector(spec.center or { 0, 0 }, 2, what .. ": field 'center'")
    local h = spec.height or 10
    if not finite(h) or h <= 0 then error(string.format("%s: field 'height' must be a number > 0 (got %s)", what, tostring(h)), 0) end
    return { mode = "2d", center = { c[1], c[2] }, height = h }
  end
  if spec.center or spec.height then
    error(string.format("%s: a 3d camera takes eye, target and fov (center and height need mode = \"2d\")", what), 0)
  end
  local eye = vector(spec.eye or DEFAULT_3D.eye, 3, what .. ": field 'eye'")
  local target = vector(spec.target or DEFAULT_3D.target, 3, what .. ": field 'target'")
  if len(sub(eye, target)) < 1e-9 then
    error(string.format("%s: field 'eye' equals field 'target' (%g, %g, %g): the view has no direction", what,
      eye[1], eye[2], eye[3]), 0)
  end
  local fov = spec.fov or DEFAULT_3D.fov
  if not finite(fov) or fov <= 0.01 or fov >= 3.1 then
    error(string.format("%s: field 'fov' must be an angle in radians between 0.01 and 3.1 (got %s)", what, tostring(fov)), 0)
  end
  return { mode = "3d", eye = eye, target = target, fov = fov }
end

-- spec: the scene's camera table (checked by Camera.check; nil: the default 3D view)
function Camera.new(spec)
  local self = setmetatable({ shake_time = 0, shake_duration = 0, shake_amplitude = 0 }, Camera)
  self:reset_to(spec)
  return self
end

-- make `spec` the scene's camera and show it (on start, R, and a reload that changed it)
function Camera:reset_to(spec)
  self.spec = Camera.check(spec)
  self:reset()
end

-- back to the scene's camera (the viewer's reset-view key); a follow keeps following
function Camera:reset()
  self:set(self.spec)
  self.shake_time, self.shake_duration, self.shake_amplitude = 0, 0, 0
end

-- set some or all of the view: eye, target, fov (3D) or center, height (2D), or mode with the rest
function Camera:set(spec)
  if type(spec) ~= "table" then error("camera.set: argument must be a table (got " .. type(spec) .. ")", 0) end
  for k in pairs(spec) do
    if not KEYS[k] then error("camera.set: unknown field '" .. tostring(k) .. "' (known: mode, eye, target, fov, center, height)", 0) end
  end
  local mode = spec.mode or self.mode
  if spec.center or spec.height then mode = spec.mode or "2d" end
  if spec.eye or spec.target or spec.fov then mode = spec.mode or "3d" end
  local full
  if mode == "2d" then
    full = { mode = "2d", center = spec.center or (self.mode == "2d" and { self.cx, self.cy }) or nil,
      height = spec.height or (self.mode == "2d" and 2 * self.half) or nil }
  else
    local eye, target = spec.eye, spec.target
    if self.mode == "3d" then
      -- a new target alone moves the eye with it (same view direction and distance)
      if target and not eye then
        local t = vector(target, 3, "camera.set: field 'target'")
        local off = sub(self:eye(), self.target)
        eye = { t[1] + off[1], t[2] + off[2], t[3] + off[3] }
      end
      target = target or self.target
      eye = eye or self:eye()
    end
    full = { mode = "3d", eye = eye, target = target, fov = spec.fov or (self.mode == "3d" and self.fov) or nil }
  end
  local c = Camera.check(full, "camera.set")
  self.mode = c.mode
  if c.mode == "2d" then
    self.cx, self.cy, self.half = c.center[1], c.center[2], c.height / 2
  else
    local d = sub(c.eye, c.target)
    self.target = c.target
    self.distance = len(d)
    self.yaw = math.atan(d[1], d[3])
    self.pitch = math.asin(math.max(-1, math.min(1, d[2] / self.distance)))
    self.fov = c.fov
  end
end

-- the view as a table, as Camera.check returns it
function Camera:get()
  if self.mode == "2d" then return { mode = "2d", center = { self.cx, self.cy }, height = 2 * self.half } end
  return { mode = "3d", eye = self:eye(), target = { self.target[1], self.target[2], self.target[3] }, fov = self.fov }
end

-- the whole view, shake included, as plain numbers: a recorded run's log keeps it so that a replay
-- reads the mouse ray through the camera the run had (history.lua)
local POSE_KEYS = { "mode", "cx", "cy", "half", "distance", "yaw", "pitch", "fov", "shake_time", "shake_duration",
  "shake_amplitude" }

function Camera:pose()
  local p = {}
  for _, k in ipairs(POSE_KEYS) do p[k] = self[k] end
  if self.target then p.target = { self.target[1], self.target[2], self.target[3] } end
  return p
end

function Camera:set_pose(p)
  for _, k in ipairs(POSE_KEYS) do self[k] = p[k] end
  self.target = p.target and { p.target[1], p.target[2], p.target[3] } or nil
end

function Camera:eye()
  local cp = math.cos(self.pitch)
  return {
    self.target[1] + self.distance * cp * math.sin(self.yaw),
    self.target[2] + self.distance * math.sin(self.pitch),
    self.target[3] + self.distance * cp * math.cos(self.yaw),
  }
end

-- ---- follow and shake -------------------------------------------------------------------------------

-- follow a body (or particle, or anything with a position; or a function returning a point) so that it
-- stays at the target (3D) or centre (2D); opts.smoothing: time constant in seconds of the exponential
-- approach (0: rigid), opts.offset: a vector added to the followed point. nil stops following.
function Camera:follow(thing, opts)
  if thing == nil then self.following = nil return end
  opts = opts or {}
  if type(opts) ~= "table" then error("camera.follow: argument 2 must be an options table", 0) end
  for k in pairs(opts) do
    if k ~= "smoothing" and k ~= "offset" then error("camera.follow: unknown option '" .. tostring(k) .. "' (known: smoothing, offset)", 0) end
  end
  local smoothing = opts.smoothing or 0.15
  if not finite(smoothing) or smoothing < 0 then error("camera.follow: option 'smoothing' must be a number of seconds >= 0", 0) end
  local offset = vector(opts.offset or { 0, 0, 0 }, 3, "camera.follow: option 'offset'")
  local ty = type(thing)
  if ty ~= "function" and ty ~= "userdata" and ty ~= "table" then
    error("camera.follow: argument 1 must be a body, a particle or a function returning a point (got " .. ty .. ")", 0)
  end
  self.following = { thing = thing, smoothing = smoothing, offset = offset }
end

-- the followed point now, or nil when the followed object is gone
local function followed_point(f)
  local thing = f.thing
  if type(thing) == "function" then return vector(thing(), 3, "camera.follow: the function's result") end
  if type(thing) == "userdata" and thing.valid and not thing:valid() then return nil end
  local p = thing.position
  if p == nil then return nil end
  return vector(p, 3, "camera.follow: the followed object's position")
end

-- a shake of `amplitude` metres that decays to nothing over `duration` seconds
function Camera:shake(amplitude, duration)
  if not finite(amplitude) or amplitude < 0 then error("camera.shake: argument 1 (amplitude, m) must be a number >= 0", 0) end
  duration = duration or 0.4
  if not finite(duration) or duration <= 0 then error("camera.shake: argument 2 (duration, s) must be a number > 0", 0) end
  self.shake_amplitude, self.shake_duration, self.shake_time = amplitude, duration, 0
end

-- advance follow and shake by a frame of dt seconds
function Camera:update(dt)
  if not finite(dt) or dt < 0 then dt = 0 end
  local f = self.following
  if f then
    local ok, p = pcall(followed_point, f)
    if not ok then
      self.following = nil
      error(p, 0)
    end
    if not p then
      self.following = nil
    else
      local goal = { p[1] + f.offset[1], p[2] + f.offset[2], p[3] + f.offset[3] }
      -- exponential approach: after t seconds the remaining distance is exp(-t / smoothing)
      local a = f.smoothing > 0 and 1 - math.exp(-dt / f.smoothing) or 1
      if self.mode == "2d" then
        self.cx, self.cy = self.cx + (goal[1] - self.cx) * a, self.cy + (goal[2] - self.cy) * a
      else
        for k = 1, 3 do self.target[k] = self.target[k] + (goal[k] - self.target[k]) * a end
      end
    end
  end
  if self.shake_time < self.shake_duration then self.shake_time = math.min(self.shake_duration, self.shake_time + dt) end
end

-- the shake's displacement now: incommensurate sines per axis, fading quadratically
function Camera:shake_offset()
  if self.shake_time >= self.shake_duration or self.shake_amplitude == 0 then return { 0, 0, 0 } end
  local t = self.shake_time
  local fade = (1 - t / self.shake_duration) ^ 2
  local a = self.shake_amplitude * fade
  return { a * math.sin(2 * math.pi * 13 * t), a * math.sin(2 * math.pi * 17.3 * t + 1.1), a * math.sin(2 * math.pi * 11.1 * t + 2.3) }
end

-- ---- what gfx draws with, and the projection math ------------------------------------------------------

-- the view with the shake applied: 3D eye, target, fov or 2D centre and half height
function Camera:view()
  local s = self:shake_offset()
  if self.mode == "2d" then return { mode = "2d", cx = self.cx + s[1], cy = self.cy + s[2], half = self.half } end
  local e = self:eye()
  return { mode = "3d", eye = { e[1] + s[1], e[2] + s[2], e[3] + s[3] },
    target = { self.target[1] + s[1], self.target[2] + s[2], self.target[3] + s[3] }, fov = self.fov }
end

function Camera:apply(gfx)
  local v = self:view()
  if v.mode == "2d" then gfx.camera2d(v.cx, v.cy, v.half) else gfx.camera3d(v.eye, v.target, v.fov) end
end

-- the camera basis of a 3D view: right, up, forward (render_view.c's update_perspective)
local function basis(v)
  local fwd, l = normalize(sub(v.target, v.eye))
  if l == 0 then fwd = { 0, 0, -1 } end
  local right, rl = normalize(cross(fwd, { 0, 1, 0 }))
  if rl < 1e-6 then right = normalize(cross(fwd, math.abs(fwd[1]) < 0.9 and { 1, 0, 0 } or { 0, 0, 1 })) end
  return right, cross(right, fwd), fwd
end

-- the 2D view's eye height above z = 0 (render_view.c: everything within +-1000 h of z = 0 is seen)
local function depth_2d(v) return 1000 * v.half end

-- the ray under window pixel (px, py) of a w x h window: origin and unit direction. 3D: from the eye;
-- 2D: from the front of the view volume straight down -z. Also returns the ray's useful length.
function Camera:ray(px, py, w, h)
  local v = self:view()
  local aspect = (w > 0 and h > 0) and w / h or 1
  local nx, ny = 2 * px / w - 1, 1 - 2 * py / h
  if v.mode == "2d" then
    local d = depth_2d(v)
    return { v.cx + nx * v.half * aspect, v.cy + ny * v.half, d }, { 0, 0, -1 }, 2 * d
  end
  local right, up, fwd = basis(v)
  local t = math.tan(v.fov / 2)
  local a, b = nx * t * aspect, ny * t
  local dir = normalize({ right[1] * a + up[1] * b + fwd[1], right[2] * a + up[2] * b + fwd[2], right[3] * a + up[3] * b + fwd[3] })
  return v.eye, dir, 500
end

-- window pixel of world point p in a w x h window, or nil when p is behind a 3D camera
function Camera:project(p, w, h)
  local v = self:view()
  local aspect = (w > 0 and h > 0) and w / h or 1
  local nx, ny
  if v.mode == "2d" then
    nx, ny = (p[1] - v.cx) / (v.half * aspect), (p[2] - v.cy) / v.half
  else
    local right, up, fwd = basis(v)
    local rel = sub(p, v.eye)
    local z = dot(rel, fwd)
    if z <= 1e-12 then return nil end
    local t = math.tan(v.fov / 2)
    nx, ny = dot(rel, right) / (z * t * aspect), dot(rel, up) / (z * t)
  end
  return (nx * 0.5 + 0.5) * w, (0.5 - ny * 0.5) * h
end

-- the point under pixel (px, py) on the plane z = 0 (2D) or nil when the ray misses it
function Camera:plane_point(px, py, w, h)
  local o, d = self:ray(px, py, w, h)
  if math.abs(d[3]) < 1e-12 then return nil end
  local t = -o[3] / d[3]
  if t < 0 then return nil end
  return { o[1] + d[1] * t, o[2] + d[2] * t, 0 }
end

-- ---- the viewer's mouse controls ------------------------------------------------------------------------

function Camera:orbit(dx, dy, h)
  if self.mode == "2d" then return self:pan(dx, dy, h) end
  self.yaw = self.yaw - dx * 0.008
  self.pitch = math.max(-1.5, math.min(1.5, self.pitch + dy * 0.008))
end

-- pan by a mouse motion in pixels, for a window of height h pixels
function Camera:pan(dx, dy, h)
  h = h or 720
  if self.mode == "2d" then
    local s = 2 * self.half / h
    self.cx, self.cy = self.cx - dx * s, self.cy + dy * s
    return
  end
  local s = self.distance * 2 * math.tan(self.fov / 2) / h
  local right = { math.cos(self.yaw), 0, -math.sin(self.yaw) }
  local sp, cp = math.sin(self.pitch), math.cos(self.pitch)
  local up = { -sp * math.sin(self.yaw), cp, -sp * math.cos(self.yaw) }
  for k = 1, 3 do self.target[k] = self.target[k] - (right[k] * dx - up[k] * dy) * s end
end

function Camera:zoom(steps)
  local f = 0.9 ^ steps
  if self.mode == "2d" then self.half = math.max(1e-6, self.half * f) else self.distance = math.max(0.2, self.distance * f) end
end

-- ---- impetus.camera: the scene's handle on the current runner's camera ----------------------------------
--
--   impetus.camera.set{eye, target, fov} or {center, height} (or mode = "2d" / "3d" with the rest)
--   impetus.camera.get()                     the view as a table (mode, eye, target, fov | center, height)
--   impetus.camera.follow(body [, {smoothing = 0.15, offset = {x, y, z}}])   nil stops following
--   impetus.camera.shake(amplitude [, duration = 0.4])
--   impetus.camera.reset()                   back to the scene's camera table
--   impetus.camera.project(point)            window pixel x, y of a world point (nil behind a 3D camera)
--   impetus.camera.ray(x, y)                 origin, unit direction of the ray under window pixel x, y
local active = require "impetus.active"
local api = {}
Camera.api = api

local function current(fn)
  local r = active.runner
  if not r then
    error("impetus.camera." .. fn .. ": no scene is running (the camera belongs to a runner: the host or impetus.runner)", 3)
  end
  return r.camera, r.input
end

-- errors raised with level 0 above become errors of the caller's line
local function call(fn, f, ...)
  local ok, a, b = pcall(f, ...)
  if not ok then error(a, 3) end
  return a, b
end

function api.set(spec, ...)
  args.at_most("impetus.camera.set(spec)", 1, spec, ...)
  local cam = current("set")
  call("set", cam.set, cam, spec)
end

function api.get(...)
  args.at_most("impetus.camera.get()", 0, ...)
  return (current("get")):get()
end

function api.follow(thing, opts, ...)
  args.at_most("impetus.camera.follow(thing [, opts])", 2, thing, opts, ...)
  local cam = current("follow")
  call("follow", cam.follow, cam, thing, opts)
end

function api.shake(amplitude, duration, ...)
  args.at_most("impetus.camera.shake(amplitude [, duration])", 2, amplitude, duration, ...)
  local cam = current("shake")
  call("shake", cam.shake, cam, amplitude, duration)
end

function api.reset(...)
  args.at_most("impetus.camera.reset()", 0, ...)
  current("reset"):reset()
end

function api.project(p, ...)
  args.at_most("impetus.camera.project(point)", 1, p, ...)
  local cam, input = current("project")
  if type(p) ~= "table" then error("impetus.camera.project: argument 'point' must be a vector {x, y, z}", 2) end
  return cam:project(vector(p, 3, "impetus.camera.project: argument 'point'"), input.width, input.height)
end

function api.ray(x, y, ...)
  args.at_most("impetus.camera.ray(x, y)", 2, x, y, ...)
  local cam, input = current("ray")
  if not finite(x) or not finite(y) then error("impetus.camera.ray: arguments x, y must be pixel coordinates", 2) end
  local o, d = cam:ray(x, y, input.width, input.height)
  return o, d
end

return Camera
