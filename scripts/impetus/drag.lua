-- drag: the viewer's mouse spring. A left press on a particle or a dynamic body holds it with a
-- critically damped spring to the cursor: a particle through a zero-length spring to a moving anchor,
-- a body at the point that was grabbed (a force at that point, so it also turns). The grabbed depth
-- along the mouse ray is kept while dragging: in the 2D camera that keeps the body in its plane.
local Drag = {}
Drag.__index = Drag

local function mat_vec(R, v) return { R[1][1] * v[1] + R[1][2] * v[2] + R[1][3] * v[3],
  R[2][1] * v[1] + R[2][2] * v[2] + R[2][3] * v[3], R[3][1] * v[1] + R[3][2] * v[2] + R[3][3] * v[3] } end
local function mat_tvec(R, v) return { R[1][1] * v[1] + R[2][1] * v[2] + R[3][1] * v[3],
  R[1][2] * v[1] + R[2][2] * v[2] + R[3][2] * v[3], R[1][3] * v[1] + R[2][3] * v[2] + R[3][3] * v[3] } end

-- stiffness per unit mass of the spring (1/s^2): the grabbed point settles in about 1/sqrt(60) s
local KS_PER_MASS = 60

-- nearest non-fixed particle to the ray, within a few radii; returns it and its distance along the ray
local function pick_particle(world, o, d)
  local best, best_t, best_dist = nil, nil, math.huge
  for _, p in ipairs(world:particles()) do
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

-- try to grab what is under the ray (o, d, usable length far); returns a Drag or nil
function Drag.start(runner, o, d, far)
  local world = runner.world
  if not world or world.locked then return nil end
  local p, t = pick_particle(world, o, d)
  -- a body under the cursor nearer than the nearest particle takes the drag
  local hit = world:raycast(o, { o[1] + d[1] * far, o[2] + d[2] * far, o[3] + d[3] * far })
  if hit and hit.body and not hit.body.static and not hit.body.kinematic and (not p or hit.fraction * far < t) then
    local self = setmetatable({ runner = runner, body = hit.body, depth = hit.fraction * far, target = hit.point }, Drag)
    local b = hit.body
    local x = b.center_of_mass
    self["local"] = mat_tvec(b.rotation, { hit.point[1] - x[1], hit.point[2] - x[2], hit.point[3] - x[3] })
    -- before every fixed step: f = ks (target - p) - kd v_p at the grabbed point, critically damped
    runner.before_step = function()
      if not b:valid() then return end
      local m = b.mass
      local ks = KS_PER_MASS * m
      local kd = 2 * math.sqrt(ks * m)
      local gp, vp = self:grab_point()
      local g = self.target
      b:apply_force({ ks * (g[1] - gp[1]) - kd * vp[1], ks * (g[2] - gp[2]) - kd * vp[2], ks * (g[3] - gp[3]) - kd * vp[3] }, gp)
    end
    return self
  end
  if p then
    local m = p.mass
    local ks = KS_PER_MASS * m
    local self = setmetatable({ runner = runner, particle = p, depth = t }, Drag)
    self.spring = world:spring(p, self:point_on_ray(o, d), { ks = ks, kd = 2 * math.sqrt(ks * m), rest = 0 })
    return self
  end
  return nil
end

function Drag:point_on_ray(o, d)
  local t = self.depth
  return { o[1] + d[1] * t, o[2] + d[2] * t, o[3] + d[3] * t }
end

-- the grabbed point of the body in world space, and its velocity v + omega x r
function Drag:grab_point()
  local b = self.body
  local x, R = b.center_of_mass, b.rotation
  local r = mat_vec(R, self["local"])
  local p = { x[1] + r[1], x[2] + r[2], x[3] + r[3] }
  local v, w = b.velocity, b.angular_velocity
  return p, { v[1] + w[2] * r[3] - w[3] * r[2], v[2] + w[3] * r[1] - w[1] * r[3], v[3] + w[1] * r[2] - w[2] * r[1] }
end

-- the mouse moved: the new ray; returns false when the dragged object is gone
function Drag:move(o, d)
  if self.body then
    if not self.body:valid() then return false end
    self.target = self:point_on_ray(o, d)
  elseif self.spring then
    if not self.spring:valid() then return false end
    self.spring.anchor = self:point_on_ray(o, d)
  end
  return true
end

function Drag:release()
  local r = self.runner
  if self.spring and self.spring:valid() and r.world and not r.world.locked then self.spring:destroy() end
  self.spring = nil
  r.before_step = nil
end

-- the line from the grabbed point to the cursor, for the viewer to draw
function Drag:draw(gfx)
  if self.body and self.body:valid() then gfx.line(self:grab_point(), self.target, { 1, 0.9, 0.3, 1 }) end
end

return Drag
