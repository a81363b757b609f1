-- Scenes with closed forms for rigid-body fidelity, shared by the specs (impulse_spec.lua, qp_spec.lua,
-- restitution_spec.lua) and tools/fidelity_figures.lua, which prints what they measure.
local impetus = require "impetus"
local fidelity = {}

-- a ball of radius 0.5 (or a capsule of core 1 lying across x) on a plane in the exact mode, moving at v0
-- along x, spinning at omega (default: rolling, omega R = v0), friction mu
function fidelity.roller(kind, v0, mu, omega)
  local w = impetus.world {}
  w.contact = "qp"
  w.friction = mu
  w.sleeping = false
  w:body { static = true, shapes = { { type = "plane", normal = { 0, 1, 0 } } } }
  local R = 0.5
  local spin = omega or { 0, 0, -v0 / R }
  if kind == "sphere" then
    return w, w:sphere { radius = R, position = { 0, R, 0 }, velocity = { v0, 0, 0 }, angular_velocity = spin }
  end
  return w, w:capsule { radius = R, length = 1, position = { 0, R, 0 }, velocity = { v0, 0, 0 }, angular_velocity = spin,
    orientation = impetus.quat.from_axis_angle({ 1, 0, 0 }, math.pi / 2) }
end

-- a tower of n cubes of edge `size` built exactly touching on a plane, friction 0.6, sleeping off, in the
-- impulse mode at the default settings; alternate: masses 1 : 10 up the column. Stepped `seconds` at 1/60
-- s; returns the largest distance any box went off its column, how far the top sank, and the largest spin
-- about the vertical at the end
function fidelity.tower(n, size, alternate, seconds)
  local w = impetus.world {}
  w.sleeping = false
  w:plane { friction = 0.6 }
  local boxes = {}
  for i = 1, n do
    local mass = alternate and (i % 2 == 0 and 10 or 1) * size ^ 3 * 1000 or nil
    boxes[i] = w:box { size = { size, size, size }, position = { 0, (i - 0.5) * size, 0 }, friction = 0.6, mass = mass }
  end
  local off = 0
  for _ = 1, math.floor(seconds * 60 + 0.5) do
    w:step(1 / 60)
    for i = 1, n do
      local p = boxes[i].position
      off = math.max(off, math.sqrt(p[1] ^ 2 + p[3] ^ 2))
    end
  end
  local spin = 0
  for i = 1, n do spin = math.max(spin, math.abs(boxes[i].angular_velocity[2])) end
  return off, (n - 0.5) * size - boxes[n].position[2], spin
end

-- a unit box (friction 0.6, e 0.5) released flat with its face 0.2 m above the floor (friction 0.6, e 0),
-- in the impulse mode, for 90 steps of 1/60 s: its bounce's error against e v - g h (v the approach speed
-- at the step it lands), the largest sideways speed and spin it had, and how far it ended from x, z
function fidelity.flat_landing()
  local dt = 1 / 60
  local w = impetus.world {}
  w.sleeping = false
  w:plane { friction = 0.6, restitution = 0 }
  local b = w:box { size = { 1, 1, 1 }, friction = 0.6, restitution = 0.5, position = { 0.3, 0.7, -0.2 } }
  local bounce_error, side, spin = nil, 0, 0
  for _ = 1, 90 do
    local vy0 = b.velocity[2]
    w:step(dt)
    local v, om = b.velocity, b.angular_velocity
    if not bounce_error and v[2] > 0 then bounce_error = v[2] - (-0.5 * vy0 - 9.81 * dt) end
    side = math.max(side, math.sqrt(v[1] ^ 2 + v[3] ^ 2))
    spin = math.max(spin, math.sqrt(om[1] ^ 2 + om[2] ^ 2 + om[3] ^ 2))
  end
  local p = b.position
  return bounce_error, side, spin, math.sqrt((p[1] - 0.3) ^ 2 + (p[3] + 0.2) ^ 2), p[2]
end

-- a solid ball (R 0.5) hitting a plane at 1 m/s along it and 3 m/s into it, no gravity, friction mu and
-- restitution e on both, in the impulse mode: its tangential speed, normal speed and omega R after
function fidelity.oblique_bounce(mu, e)
  local w = impetus.world { gravity = { 0, 0, 0 } }
  w.sleeping = false
  w:plane { normal = { 0, 1, 0 }, friction = mu, restitution = e }
  local R = 0.5
  local b = w:sphere { radius = R, position = { 0, R, 0 }, velocity = { 1, -3, 0 }, friction = mu, restitution = e }
  for _ = 1, 3 do w:step(1 / 60) end
  return b.velocity[1], b.velocity[2], -b.angular_velocity[3] * R
end

-- two elastic balls (R 0.1, no friction) meeting head on at 0.3 m/s, in `mode`; the impulse mode with
-- the restitution threshold given (nil: the default); gravity: rolling on a frictionless floor. Returns
-- the two balls after 2 s
function fidelity.two_balls(mode, threshold, gravity)
  local w = impetus.world { gravity = gravity and { 0, -9.81, 0 } or { 0, 0, 0 } }
  w.contact = mode
  w.sleeping = false
  if mode == "qp" then w.restitution, w.friction = 1, 0 end
  if threshold then w.restitution_threshold = threshold end
  if gravity then w:plane { friction = 0, restitution = 0 } end
  local a = w:sphere { radius = 0.1, position = { -0.2, 0.1, 0 }, velocity = { 0.15, 0, 0 }, restitution = 1, friction = 0 }
  local b = w:sphere { radius = 0.1, position = { 0.2, 0.1, 0 }, velocity = { -0.15, 0, 0 }, restitution = 1, friction = 0 }
  for _ = 1, 120 do w:step(1 / 60) end
  return a, b
end

-- 50 balls of radii 0.1-0.2 m in a closed 4 m box of static walls, no gravity, e = 1, no friction, random
-- velocities up to `speed` per axis (seeded), in `mode` (the impulse mode with the threshold given): the
-- kinetic energy after 10 s over the start's, and how many steps changed the first ball's velocity
function fidelity.gas(mode, speed, threshold)
  local w = impetus.world { gravity = { 0, 0, 0 } }
  w.contact = mode
  w.sleeping = false
  if mode == "qp" then w.restitution, w.friction = 1, 0 end
  if threshold then w.restitution_threshold = threshold end
  local L = 4
  for _, s in ipairs { { { L + 1, 1, L + 1 }, { 0, -0.5, 0 } }, { { L + 1, 1, L + 1 }, { 0, L + 0.5, 0 } },
    { { 1, L + 1, L + 1 }, { -L / 2 - 0.5, L / 2, 0 } }, { { 1, L + 1, L + 1 }, { L / 2 + 0.5, L / 2, 0 } },
    { { L + 1, L + 1, 1 }, { 0, L / 2, -L / 2 - 0.5 } }, { { L + 1, L + 1, 1 }, { 0, L / 2, L / 2 + 0.5 } } } do
    w:box { static = true, size = s[1], position = s[2], restitution = 1, friction = 0 }
  end
  local seed = 7
  local function rnd() seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648 end
  local balls = {}
  for i = 0, 49 do
    local x, y, z = i % 4, (i // 4) % 4, i // 16
    balls[#balls + 1] = w:sphere { radius = 0.1 + 0.1 * rnd(), position = { -1.5 + x, 0.5 + y, -1.5 + z }, restitution = 1,
      friction = 0, velocity = { speed * (2 * rnd() - 1), speed * (2 * rnd() - 1), speed * (2 * rnd() - 1) } }
  end
  local function ke()
    local e = 0
    for _, b in ipairs(balls) do e = e + b:kinetic_energy() end
    return e
  end
  local e0, changed = ke(), 0
  for _ = 1, 600 do
    local v = balls[1].velocity
    w:step(1 / 60)
    local u = balls[1].velocity
    if u[1] ~= v[1] or u[2] ~= v[2] or u[3] ~= v[3] then changed = changed + 1 end
  end
  return ke() / e0, changed
end

return fidelity
