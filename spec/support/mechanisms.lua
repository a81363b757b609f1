-- spec/support/mechanisms.lua: the mechanisms of spec/articulated_spec.lua, shared with
-- tools/articulated_figures.lua (which prints the figures docs/joints.md quotes): a closed four-bar linkage and
-- its closed form, box chains, and angles read from the bodies.
local impetus = require "impetus"
local M = {}
local g = 9.81

function M.wrap(x) return (x + math.pi) % (2 * math.pi) - math.pi end

-- the angle about z of a body's x axis (a link laid along its local x)
function M.angle_z(body)
  local R = body.rotation
  return math.atan(R[2][1], R[1][1])
end

-- the intersection of the circle of radius r1 about p with the circle of radius r2 about q (in x-y) nearest ref
function M.circles(p, r1, q, r2, ref)
  local dx, dy = q[1] - p[1], q[2] - p[2]
  local D = math.sqrt(dx * dx + dy * dy)
  local x = (r1 * r1 - r2 * r2 + D * D) / (2 * D)
  local h = math.sqrt(math.max(0, r1 * r1 - x * x))
  local mx, my = p[1] + x * dx / D, p[2] + x * dy / D
  local s1 = { mx - h * dy / D, my + h * dx / D }
  local s2 = { mx + h * dy / D, my - h * dx / D }
  local d1 = (s1[1] - ref[1]) ^ 2 + (s1[2] - ref[2]) ^ 2
  local d2 = (s2[1] - ref[1]) ^ 2 + (s2[2] - ref[2]) ^ 2
  return d1 < d2 and s1 or s2
end

-- a planar four-bar in the x-y plane: ground pivots O2 = (0, Y) and O4 = (d, Y), crank O2-A (length a),
-- coupler A-B (b), rocker O4-B (c), four hinges about z. d, a, b, c = 1, 0.3, 1, 0.8 is a Grashof
-- crank-rocker (s + l = 1.3 <= p + q = 1.8): the crank can turn all the way round.
M.FB = { d = 1.0, a = 0.3, b = 1.0, c = 0.8, Y = 5 }
function M.four_bar(theta2, motor)
  local w = impetus.world {}
  w.sleeping = false
  local O2, O4 = { 0, M.FB.Y }, { M.FB.d, M.FB.Y }
  local A = { M.FB.a * math.cos(theta2), M.FB.Y + M.FB.a * math.sin(theta2) }
  local B = M.circles(A, M.FB.b, O4, M.FB.c, { M.FB.d, M.FB.Y + 1 })
  local function link(p, q)
    local L = math.sqrt((q[1] - p[1]) ^ 2 + (q[2] - p[2]) ^ 2)
    return w:box { size = { L, 0.05, 0.05 }, position = { (p[1] + q[1]) / 2, (p[2] + q[2]) / 2, 0 },
      axis = { 0, 0, 1 }, angle = math.atan(q[2] - p[2], q[1] - p[1]), density = 500, group = 2, mask = 1 }
  end
  local crank, coupler, rocker = link(O2, A), link(A, B), link(O4, B)
  local z = { 0, 0, 1 }
  local joints = {
    w:joint { type = "hinge", a = crank, anchor = { O2[1], O2[2], 0 }, axis = z, motor = motor },
    w:joint { type = "hinge", a = coupler, b = crank, anchor = { A[1], A[2], 0 }, axis = z },
    w:joint { type = "hinge", a = rocker, b = coupler, anchor = { B[1], B[2], 0 }, axis = z },
    w:joint { type = "hinge", a = rocker, anchor = { O4[1], O4[2], 0 }, axis = z },
  }
  return w, { crank = crank, coupler = coupler, rocker = rocker, joints = joints, B = B, O2 = O2, O4 = O4 }
end

-- a chain of n box links (1 m x 0.2 x 0.2; density 500 unless given: 20 kg) hanging from the world at
-- (0, 10, 0), laid out along +x; kind "point" (default) or "hinge" (about z)
function M.box_chain(n, kind, density)
  local w = impetus.world {}
  w.sleeping = false
  local links, joints, prev = {}, {}, nil
  for i = 1, n do
    local b = w:box { size = { 1, 0.2, 0.2 }, position = { i - 0.5, 10, 0 }, density = density or 500 }
    links[i] = b
    joints[i] = w:joint { type = kind or "point", a = b, b = prev, anchor = { i - 1, 10, 0 },
      axis = kind == "hinge" and { 0, 0, 1 } or nil }
    prev = b
  end
  return w, links, joints
end

function M.energy(links)
  local e = 0
  for _, b in ipairs(links) do e = e + b:kinetic_energy() + b.mass * g * b.position[2] end
  return e
end

-- the largest difference between the coupler's and rocker's angles and the closed form given the crank's
-- angle; prev carries the last B (the assembly branch) between calls
function M.four_bar_error(m, prev)
  local t2 = M.angle_z(m.crank)
  local A = { m.O2[1] + M.FB.a * math.cos(t2), m.O2[2] + M.FB.a * math.sin(t2) }
  local B = M.circles(A, M.FB.b, m.O4, M.FB.c, prev.B or m.B)
  prev.B = B
  local t3 = math.atan(B[2] - A[2], B[1] - A[1])
  local t4 = math.atan(B[2] - m.O4[2], B[1] - m.O4[1])
  return math.max(math.abs(M.wrap(M.angle_z(m.coupler) - t3)), math.abs(M.wrap(M.angle_z(m.rocker) - t4))), t2
end

-- one doll of scenes/ragdoll.lua (its own builder), lying forward 2.8 m above a dead floor (friction 0.6,
-- restitution 0) and moving at 1.5 m/s along +x: the world, the floor, the doll's parts and their mass
function M.dropped_ragdoll()
  local scene = dofile("scenes/ragdoll.lua")
  local w = impetus.world {}
  w.sleeping = false
  local floor = w:plane { friction = 0.6, restitution = 0 }
  local q = impetus.quat.from_axis_angle({ 0, 0, 1 }, -math.pi / 2 + 0.4)
  local doll = scene.ragdoll(w, { 0, 2.8, 0 }, q, { 1.5, 0, 0 }, { 1, 1, 1 })
  local parts, mass = {}, 0
  for _, b in pairs(doll) do parts[#parts + 1] = b; mass = mass + b.mass end
  return w, floor, parts, mass
end

-- k bobs (0.05 m cubes) on ball joints 0.5 m out on a sphere held at its centre by a ball joint to the
-- world, released horizontal 2 m out; no collisions. By symmetry the hub stays put and each bob is a
-- compound pendulum about its anchor (d = 1.5 m). Steps of h until the last bob first passes under its
-- anchor: that time (interpolated between steps), the largest joint gap, how far the hub moved, a bob's
-- mass and the hubs the joint solve saw (world.joint_hubs)
function M.hub_star(k, h)
  local w = impetus.world {}
  w.sleeping = false
  local hub = w:sphere { radius = 0.5, position = { 0, 10, 0 } }
  local joints = { w:joint { type = "point", a = hub, anchor = { 0, 10, 0 } } }
  local bobs = {}
  for i = 1, k do
    local a = 2 * math.pi * i / k
    bobs[i] = w:box { size = { 0.05, 0.05, 0.05 }, position = { 2 * math.cos(a), 10, 2 * math.sin(a) }, group = 2, mask = 1 }
    joints[#joints + 1] = w:joint { type = "point", a = bobs[i], b = hub, anchor = { 0.5 * math.cos(a), 10, 0.5 * math.sin(a) } }
  end
  local b, t, gap = bobs[k], 0, 0
  local function radial() local p = b.position return math.sqrt(p[1] ^ 2 + p[3] ^ 2) - 0.5 end
  for _ = 1, 2000 do
    local r0 = radial()
    w:step(h)
    t = t + h
    for _, j in ipairs(joints) do gap = math.max(gap, j.gap) end
    local r1 = radial()
    if r0 > 0 and r1 <= 0 then
      local p = hub.position
      return t - h + h * r0 / (r0 - r1), gap, math.sqrt(p[1] ^ 2 + (p[2] - 10) ^ 2 + p[3] ^ 2), b.mass, w.joint_hubs
    end
  end
  error("the bob never swung down")
end

-- hub_star's quarter period from horizontal, sqrt(I / (m g d)) K(sin 45 deg), I = m s^2 / 6 + m d^2 (K by
-- the arithmetic-geometric mean)
function M.hub_star_quarter(m)
  local d, s = 1.5, 0.05
  local I = m * s * s / 6 + m * d * d
  local x, y = 1, math.sqrt(1 - 0.5)
  for _ = 1, 30 do x, y = (x + y) / 2, math.sqrt(x * y) end
  return math.sqrt(I / (m * g * d)) * math.pi / (2 * x)
end

-- the angle between two bodies' local x axes (the links below are laid along x)
function M.x_angle(a, b)
  local Ra, Rb = a.rotation, b.rotation
  local d = Ra[1][1] * Rb[1][1] + Ra[2][1] * Rb[2][1] + Ra[3][1] * Rb[3][1]
  return math.acos(math.max(-1, math.min(1, d)))
end

return M
