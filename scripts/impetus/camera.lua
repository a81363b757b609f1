-- camera: an orbit camera for 3D scenes and a pan/zoom camera for 2D ones, driven by the mouse.
-- Left drag orbits (3D) or pans (2D), right or middle drag pans, the wheel zooms.
local Camera = {}
Camera.__index = Camera

local function sub(a, b) return { a[1] - b[1], a[2] - b[2], a[3] - b[3] } end
local function len(a) return math.sqrt(a[1] ^ 2 + a[2] ^ 2 + a[3] ^ 2) end

-- spec: the scene's camera table: {eye = {..}, target = {..}, fov = rad} or {mode = "2d", center = {x, y}, height = h}
function Camera.new(spec)
  spec = spec or {}
  local self = setmetatable({}, Camera)
  if spec.mode == "2d" then
    self.mode = "2d"
    local c = spec.center or { 0, 0 }
    self.cx, self.cy = c[1], c[2]
    self.half = (spec.height or 10) / 2
  else
    self.mode = "3d"
    local eye, target = spec.eye or { 6, 4, 10 }, spec.target or { 0, 1, 0 }
    local d = sub(eye, target)
    self.target = { target[1], target[2], target[3] }
    self.distance = len(d)
    self.yaw = math.atan(d[1], d[3])
    self.pitch = math.asin(d[2] / self.distance)
    self.fov = spec.fov or 0.9
  end
  return self
end

function Camera:eye()
  local cp = math.cos(self.pitch)
  return {
    self.target[1] + self.distance * cp * math.sin(self.yaw),
    self.target[2] + self.distance * math.sin(self.pitch),
    self.target[3] + self.distance * cp * math.cos(self.yaw),
  }
end

function Camera:apply(gfx)
  if self.mode == "2d" then
    gfx.camera2d(self.cx, self.cy, self.half)
  else
    gfx.camera3d(self:eye(), self.target, self.fov)
  end
end

function Camera:orbit(dx, dy)
  if self.mode == "2d" then return self:pan(dx, dy) end
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
  if self.mode == "2d" then self.half = self.half * f else self.distance = math.max(0.2, self.distance * f) end
end

return Camera
