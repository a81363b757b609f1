-- tools/qp_figures.lua: the measured figures of the exact contact mode (docs/exact_contact.md).
-- spec/qp_spec.lua asserts a bound on each; this prints the numbers themselves. From the checkout's root:
--   LUA_PATH='scripts/?.lua;scripts/?/init.lua;;' LUA_CPATH='build/release/lib/?.so;;' lua5.4 tools/qp_figures.lua
local impetus = require "impetus"
local g, dt = 9.81, 1 / 60

local function qp_world(opts)
  local w = impetus.world(opts or {})
  w.contact = "qp"
  return w
end

local function ground(w, normal) return w:body { static = true, shapes = { { type = "plane", normal = normal } } } end

-- 1. a hinge pendulum on an axis tilted 45 degrees, spinning about it: the free end of the box stays on the
-- anchor, the box's axis on the world's, over 5 s and 20 s
do
  local s = 1 / math.sqrt(2)
  local w = qp_world()
  local b = w:box { size = { 1, 0.2, 0.3 }, position = { 0.5, 2, 0 }, mass = 2 }
  w:joint { type = "hinge", a = b, anchor = { 0, 2, 0 }, axis = { 0, s, s } }
  b.angular_velocity, b.velocity = { 0, 2, 2 }, { 0, 1, -1 }
  local e0, anchor, axis = w:energy(), 0, 0
  for step = 1, 1200 do
    w:step(dt)
    local R, p = b.rotation, b.position
    local e = { p[1] - 0.5 * R[1][1], p[2] - 0.5 * R[2][1], p[3] - 0.5 * R[3][1] }
    anchor = math.max(anchor, math.sqrt(e[1] ^ 2 + (e[2] - 2) ^ 2 + e[3] ^ 2))
    local c = (R[2][2] + R[2][3]) * s * s + (R[3][2] + R[3][3]) * s * s
    axis = math.max(axis, math.sqrt(math.max(0, 1 - c * c)))
    if step == 300 or step == 1200 then
      print(string.format("hinge pendulum on a tilted axis, RK4 at 1/60, %2d s: anchor within %.1e m, axis within %.1e rad, " ..
        "energy change %.1e J", step // 60, anchor, axis, w:energy() - e0))
    end
  end
end

-- 2. a prismatic joint at 0, 30 and 60 degrees from the vertical: the slide after 1 s against g cos(angle) t^2 / 2
do
  local out = {}
  for _, deg in ipairs { 0, 30, 60 } do
    local a = math.rad(deg)
    local w = qp_world()
    local ax = { math.sin(a), -math.cos(a), 0 }
    local b = w:box { size = { 0.3, 0.3, 0.3 }, position = { 0, 2, 0 }, mass = 2,
      orientation = impetus.quat.from_axis_angle({ 1, 1, 0 }, 0.4) }
    w:joint { type = "prismatic", a = b, anchor = { 0, 2, 0 }, axis = ax }
    for _ = 1, 60 do w:step(dt) end
    local p = b.position
    local along = p[1] * ax[1] + (p[2] - 2) * ax[2]
    out[#out + 1] = string.format("%d deg %.1e", deg, math.abs(along - 0.5 * g * math.cos(a)))
  end
  print("prismatic joint, slide after 1 s against g cos(angle) / 2 (m): " .. table.concat(out, ", "))
end

-- 3. a bead on a spinning rod (a hinge to the world, a prismatic joint on the rod), no gravity, 1 s
do
  local w = qp_world { gravity = { 0, 0, 0 } }
  local rod = w:box { size = { 4, 0.1, 0.1 }, mass = 1 }
  local bead = w:box { size = { 0.2, 0.2, 0.2 }, position = { 0.5, 0, 0 }, mass = 0.5 }
  w:joint { type = "hinge", a = rod, anchor = { 0, 0, 0 }, axis = { 0, 0, 1 } }
  local j = w:joint { type = "prismatic", a = bead, b = rod, anchor = { 0.5, 0, 0 }, axis = { 1, 0, 0 } }
  rod.angular_velocity, bead.angular_velocity, bead.velocity = { 0, 0, 2 }, { 0, 0, 2 }, { 0, 1, 0 }
  local function Lz()
    local l = rod.angular_momentum[3] + bead.angular_momentum[3]
    for _, b in ipairs { rod, bead } do
      local p, v = b.position, b.velocity
      l = l + b.mass * (p[1] * v[2] - p[2] * v[1])
    end
    return l
  end
  local e0, L0, worst = w:energy(), Lz(), 0
  for _ = 1, 60 do
    w:step(dt)
    worst = math.max(worst, j.gap, j.axis_error)
  end
  print(string.format("bead on a spinning rod, 1 s: energy change %.1e J, angular momentum change %.1e, joint error %.1e",
    w:energy() - e0, Lz() - L0, worst))
end

-- 4. two tumbling boxes welded by a rigid joint, no gravity, 5 s
do
  local w = qp_world { gravity = { 0, 0, 0 } }
  local a = w:box { size = { 1, 0.3, 0.3 }, mass = 1 }
  local b = w:box { size = { 0.3, 1, 0.3 }, position = { 0.65, 0.35, 0 }, mass = 2 }
  local j = w:joint { type = "rigid", a = b, b = a, anchor = { 0.5, 0, 0 } }
  local om, r = { 1, 2, 3 }, { 0.65, 0.35, 0 }
  a.angular_velocity, b.angular_velocity = om, om
  b.velocity = { om[2] * r[3] - om[3] * r[2], om[3] * r[1] - om[1] * r[3], om[1] * r[2] - om[2] * r[1] }
  local function momenta()
    local P, L = { 0, 0, 0 }, { 0, 0, 0 }
    for _, x in ipairs { a, b } do
      local p, v, m, l = x.position, x.velocity, x.mass, x.angular_momentum
      for k = 1, 3 do P[k] = P[k] + m * v[k] end
      L[1] = L[1] + m * (p[2] * v[3] - p[3] * v[2]) + l[1]
      L[2] = L[2] + m * (p[3] * v[1] - p[1] * v[3]) + l[2]
      L[3] = L[3] + m * (p[1] * v[2] - p[2] * v[1]) + l[3]
    end
    return P, L
  end
  local P0, L0 = momenta()
  local worst = 0
  for _ = 1, 300 do
    w:step(dt)
    worst = math.max(worst, j.gap, j.axis_error)
  end
  local P1, L1 = momenta()
  local dP, dL = 0, 0
  for k = 1, 3 do dP, dL = math.max(dP, math.abs(P1[k] - P0[k])), math.max(dL, math.abs(L1[k] - L0[k])) end
  print(string.format("two tumbling boxes welded by a rigid joint, 5 s: momentum change %.1e, angular momentum change %.1e, " ..
    "weld error %.1e", dP, dL, worst))
end

-- 5. a 2 kg unit box on a 30-degree plane: sliding (mu 0.2) against g (sin - mu cos) t^2 / 2, sticking (mu 0.8)
do
  local function slide(mu)
    local th = math.rad(30)
    local n = { -math.sin(th), math.cos(th), 0 }
    local w = qp_world()
    w.friction = mu
    ground(w, n)
    local b = w:box { size = { 1, 1, 1 }, position = { 0.499999 * n[1], 0.499999 * n[2], 0 }, axis = { 0, 0, 1 }, angle = th, mass = 2 }
    w:collide()
    for _ = 1, 60 do w:step(dt) end
    local p = b.position
    return -(p[1] * math.cos(th) + p[2] * math.sin(th)), th
  end
  local along, th = slide(0.2)
  local creep = slide(0.8)
  print(string.format("box on 30 degrees, 1 s: mu 0.2 slides %.6f m (closed form %.6f m); mu 0.8 creeps %.3f mm",
    along, 0.5 * g * (math.sin(th) - 0.2 * math.cos(th)), creep * 1e3))
end

-- 6. a 3-box tower solved by the projected Gauss-Seidel fallback (qp_dense_max = 4 < its 12 rows)
do
  local w = qp_world()
  w.qp_dense_max = 4
  ground(w)
  for i = 0, 2 do w:box { size = { 1, 1, 1 }, position = { 0.1 * i, 0.5 + i, 0 }, mass = 1 + i } end
  w:collide()
  local level, worst = {}, 0
  for _, c in ipairs(w:solve_contacts()) do
    local y = math.floor(c.point[2] + 0.5)
    level[y] = (level[y] or 0) + c.force
    worst = math.max(worst, -c.acceleration, math.abs(c.force * c.acceleration) / (6 * g))
  end
  local expect = { [0] = 6 * g, 5 * g, 3 * g }
  local err = 0
  for y = 0, 2 do err = math.max(err, math.abs(level[y] - expect[y]) / (6 * g)) end
  print(string.format("3-box tower on the Gauss-Seidel fallback: level loads off by %.1e of the total weight, " ..
    "complementarity |f d''| / M g and -d'' within %.1e m/s^2", err, worst))
end
