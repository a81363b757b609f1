-- world.contact = "qp": exact contact forces (S0 8-9 and appendix D, S2, S4) and simultaneous collisions.
local impetus = require "impetus"
local helpers = require "helpers"
local near = helpers.near
local g = 9.81

local function qp_world(opts)
  local w = impetus.world(opts or {})
  w.contact = "qp"
  return w
end

local function ground(w, normal)
  return w:body { static = true, shapes = { { type = "plane", normal = normal } } }
end

local function sum_forces(cs)
  local s = 0
  for _, c in ipairs(cs) do s = s + c.force end
  return s
end

describe("world.contact", function()
  it("is \"impulse\" by default, \"qp\" when set, and refuses anything else", function()
    local w = impetus.world {}
    assert.are.equal("impulse", w.contact)
    w.contact = "qp"
    assert.are.equal("qp", w.contact)
    assert.has_error(function() w.contact = "exact" end, 'world.contact must be "impulse", "qp" or "none" (got "exact")')
    assert.has_error(function() w.restitution = 2 end, "world.restitution: must be a number in [0, 1]")
  end)
end)

describe("resting contact forces", function()
  it("a box resting on the floor: four coplanar contacts, forces sum to M g, d'' = 0", function()
    local w = qp_world()
    ground(w)
    w:box { size = { 2, 1, 1 }, position = { 0, 0.5, 0 }, mass = 3 }
    w:collide()
    local cs, info = w:solve_contacts()
    assert.are.equal(4, #cs)
    assert.are.equal("ok", info.status)
    near(sum_forces(cs), 3 * g, 1e-9, "sum of the contact forces")
    for _, c in ipairs(cs) do
      assert(c.force >= 0)
      near(c.acceleration, 0, 1e-9, "d''")
    end
  end)

  it("a box resting on the floor stays at rest: zero accelerations over 2 s of RK4 steps", function()
    local w = qp_world()
    ground(w)
    local b = w:box { size = { 2, 1, 1 }, position = { 0, 0.5, 0 }, mass = 3 }
    w:collide()
    for _ = 1, 120 do w:step(1 / 60) end
    near(b.position[2], 0.5 - 1e-5, 1e-9, "height (resting contacts settle 10 um deep)")
    near(b.velocity[2], 0, 1e-9, "vertical velocity")
    near(b.angular_velocity[1] + b.angular_velocity[3], 0, 1e-9, "angular velocity")
  end)

  it("a box on a box (redundant contacts): the lower carries both weights, the upper its own", function()
    local w = qp_world()
    ground(w)
    local lower = w:box { size = { 1, 1, 1 }, position = { 0, 0.5, 0 }, mass = 2 }
    local upper = w:box { size = { 1, 1, 1 }, position = { 0, 1.5, 0 }, mass = 1 }
    w:collide()
    local cs, info = w:solve_contacts()
    assert.are.equal("ok", info.status)
    local floor, between = 0, 0
    for _, c in ipairs(cs) do
      assert(c.force == c.force, "no NaN")
      if c.b == nil or c.b == lower and c.a == upper or c.a == lower and c.b == upper then end
      if (c.a == upper or c.b == upper) then between = between + c.force else floor = floor + c.force end
      near(c.acceleration, 0, 1e-9, "d''")
    end
    near(between, 1 * g, 1e-9, "force between the boxes")
    near(floor, 3 * g, 1e-9, "force on the floor")
    for _ = 1, 60 do w:step(1 / 60) end
    for _ = 1, 300 do w:step(1 / 60) end
    near(upper.position[2], 1.5 - 2e-5, 1e-8, "upper box height after 6 s (two contacts 10 um deep)")
    near(upper.position[1], 0, 1e-9, "upper box sideways")
  end)

  for _, deg in ipairs({ 10, 30 }) do
    it("a mass on a frictionless incline of " .. deg .. " degrees: contact force m g cos(theta), sliding at g sin(theta)", function()
      local th = math.rad(deg)
      local n = { -math.sin(th), math.cos(th), 0 }
      local w = qp_world()
      ground(w, n)
      local m = 2
      local b = w:box { size = { 1, 1, 1 }, position = { 0.499999 * n[1], 0.499999 * n[2], 0 }, axis = { 0, 0, 1 }, angle = th, mass = m }
      w:collide()
      local cs = w:solve_contacts()
      assert.are.equal(4, #cs)
      near(sum_forces(cs), m * g * math.cos(th), 1e-9, "normal force")
      -- slide for 0.5 s: distance along the slope 1/2 g sin(theta) t^2, no lift-off or sinking
      for _ = 1, 30 do w:step(1 / 60) end
      local p = b.position
      local along = -(p[1] * math.cos(th) + p[2] * math.sin(th))
      local off = p[1] * n[1] + p[2] * n[2]
      near(along, 0.5 * g * math.sin(th) * 0.25, 1e-6, "distance down the slope")
      near(off, 0.5 - 1e-5, 1e-6, "height above the slope (10 um deep)")
    end)
  end

  it("wind lifting a block: a force above M g leaves every contact force zero", function()
    local w = qp_world()
    ground(w)
    local b = w:box { size = { 1, 1, 1 }, position = { 0, 0.5, 0 }, mass = 1 }
    w:collide()
    b:apply_force({ 0, 1.5 * g, 0 })
    local cs = w:solve_contacts()
    assert.are.equal(4, #cs)
    for _, c in ipairs(cs) do
      assert.are.equal(0, c.force)
      assert(c.acceleration > 0, "the contacts separate")
    end
  end)

  it("S4's 1 x 3 block standing upright rests: no corner impacts, no rocking", function()
    local w = qp_world()
    w.restitution = 0.5
    ground(w)
    local b = w:box { size = { 1, 3, 1 }, position = { 0, 1.5, 0 }, mass = 1 }
    w:collide()
    local worst_w, worst_y = 0, 0
    for _ = 1, 300 do
      w:step(1 / 60)
      local om = b.angular_velocity
      worst_w = math.max(worst_w, math.abs(om[1]), math.abs(om[2]), math.abs(om[3]))
      worst_y = math.max(worst_y, math.abs(b.position[2] - (1.5 - 1e-5)))
    end
    assert(worst_w < 1e-9, "angular velocity " .. worst_w)
    assert(worst_y < 1e-5 + 1e-9, "height error " .. worst_y)
  end)

  it("a dropped box comes to rest on the floor, pushed back to touching", function()
    local w = qp_world()
    ground(w)
    local b = w:box { size = { 1, 1, 1 }, position = { 0, 1, 0 }, mass = 1 }
    for _ = 1, 120 do w:step(1 / 60) end
    near(b.position[2], 0.5 - 1e-5, 1e-4, "height after 2 s")
    near(b.velocity[2], 0, 1e-3, "velocity after 2 s")
  end)
end)

describe("Coulomb friction (world.friction, the cone approximation)", function()
  local function incline(mu, deg)
    local th = math.rad(deg)
    local n = { -math.sin(th), math.cos(th), 0 }
    local w = qp_world()
    w.friction = mu
    ground(w, n)
    local b = w:box { size = { 1, 1, 1 }, position = { 0.499999 * n[1], 0.499999 * n[2], 0 }, axis = { 0, 0, 1 }, angle = th, mass = 2 }
    w:collide()
    for _ = 1, 60 do w:step(1 / 60) end
    local p = b.position
    return -(p[1] * math.cos(th) + p[2] * math.sin(th)), th
  end

  it("mu = 0.2 on 30 degrees: slides at g (sin - mu cos), the kinetic friction exactly mu m g cos", function()
    local along, th = incline(0.2, 30)
    near(along, 0.5 * g * (math.sin(th) - 0.2 * math.cos(th)), 1e-5, "distance after 1 s")
  end)

  it("mu = 0.8 > tan 30 degrees: static friction holds it (creep under 0.5 mm in 1 s)", function()
    local along = incline(0.8, 30)
    assert(math.abs(along) < 5e-4, "moved " .. along .. " m")
  end)

  it("is refused outside [0, 100]", function()
    local w = qp_world()
    assert.has_error(function() w.friction = -1 end, "world.friction: must be a number in [0, 100]")
  end)
end)

describe("joints as equality rows (world:joint)", function()
  local function pendulum()
    local w = qp_world()
    local b = w:box { size = { 0.2, 1, 0.2 }, position = { 0, 1.5, 0 }, mass = 2 }
    w:joint { a = b, point = { 0, 2, 0 } }
    return w, b
  end

  it("a box hanging from a ball joint: the joint force is M g, straight up", function()
    local w = pendulum()
    local cs, info = w:solve_contacts()
    assert.are.equal("ok", info.status)
    assert.are.equal(3, #cs)
    local F = { 0, 0, 0 }
    for _, c in ipairs(cs) do
      assert.is_true(c.joint)
      for k = 1, 3 do F[k] = F[k] + c.force * c.normal[k] end
      near(c.acceleration, 0, 1e-12, "joint row d''")
    end
    near(F[1], 0, 1e-12, "Fx"); near(F[2], 2 * g, 1e-12, "Fy"); near(F[3], 0, 1e-12, "Fz")
  end)

  it("swinging for 5 s (RK4, 60 Hz): the anchor stays within 1e-5 m, energy within 1e-4 J", function()
    local w, b = pendulum()
    b.angular_velocity = { 0, 0, 3 }
    b.velocity = { 1.5, 0, 0 } -- the anchor at rest: v = -omega x r
    local e0, worst = w:energy(), 0
    for _ = 1, 300 do
      w:step(1 / 60)
      local R, p = b.rotation, b.position
      local top = { p[1] + 0.5 * R[1][2], p[2] + 0.5 * R[2][2], p[3] + 0.5 * R[3][2] }
      worst = math.max(worst, math.sqrt(top[1] ^ 2 + (top[2] - 2) ^ 2 + top[3] ^ 2))
    end
    assert(worst < 1e-5, "anchor error " .. worst)
    near(w:energy(), e0, 1e-4, "energy")
  end)

  it("a fixed joint (a weld, 9 rows of rank 6) holds a cantilever still and carries a box set on it", function()
    local w = qp_world()
    local beam = w:box { size = { 2, 0.2, 0.2 }, position = { 1, 2, 0 }, mass = 1 }
    w:joint { a = beam, point = { 0, 2, 0 }, fixed = true }
    local cs, info = w:solve_contacts()
    assert.are.equal(9, #cs)
    assert.are.equal("ok", info.status)
    local F = { 0, 0, 0 }
    for _, c in ipairs(cs) do for k = 1, 3 do F[k] = F[k] + c.force * c.normal[k] end end
    near(F[2], g, 1e-9, "the weld carries the beam")
    local box = w:box { size = { 0.5, 0.5, 0.5 }, position = { 1.9, 2.35, 0 }, mass = 1 }
    for _ = 1, 300 do assert(w:step(1 / 60)) end
    near(beam.position[1], 1, 1e-6, "beam x"); near(beam.position[2], 2, 1e-6, "beam y")
    near(box.position[2], 2.35 - 1e-5, 1e-6, "the box rests on the beam's end")
  end)

  it("refuses bad arguments", function()
    local w, b = pendulum()
    assert.has_error(function() w:joint { a = b } end, "world:joint: field 'point' is required")
    assert.has_error(function() w:joint { a = b, b = b, point = { 0, 0, 0 } } end, "world:joint: fields 'a' and 'b' must be two bodies")
    assert.has_error(function() w:joint { point = { 0, 0, 0 } } end, "world:joint: field 'a' (a body) is required")
    assert.has_error(function() w:joint { a = b, point = { 0, 0, 0 }, c = 1 } end)
  end)
end)

describe("typed joints (world:joint{type = ...}) as equality rows", function()
  -- joint.c gives each joint's constrained directions (joints_rows); the QP mode solves them with the
  -- contacts: a linear row keeps the articulation points together along its direction (fixed in B),
  -- an angular row the relative angular velocity along its direction
  it("a hinge pendulum on a tilted axis swings 5 s (RK4, 60 Hz): anchor within 3e-5 m, axis within 5e-6 rad, energy within 1e-3 J", function()
    local s = 1 / math.sqrt(2)
    local w = qp_world()
    local b = w:box { size = { 1, 0.2, 0.3 }, position = { 0.5, 2, 0 }, mass = 2 }
    local j = w:joint { type = "hinge", a = b, anchor = { 0, 2, 0 }, axis = { 0, s, s } }
    -- spinning about the axis, the anchor at rest: v = omega x (x - anchor); gravity has torque off the
    -- axis, which the two angular rows must hold
    b.angular_velocity = { 0, 2, 2 }
    b.velocity = { 0, 1, -1 }
    local cs = w:solve_contacts()
    assert.are.equal(5, #cs) -- three linear rows, two angular
    local e0, anchor, axis = w:energy(), 0, 0
    for _ = 1, 300 do
      assert(w:step(1 / 60))
      local R, p = b.rotation, b.position
      local end_ = { p[1] - 0.5 * R[1][1], p[2] - 0.5 * R[2][1], p[3] - 0.5 * R[3][1] }
      anchor = math.max(anchor, math.sqrt(end_[1] ^ 2 + (end_[2] - 2) ^ 2 + end_[3] ^ 2))
      local c = (R[2][2] + R[2][3]) * s * s + (R[3][2] + R[3][3]) * s * s -- the body's axis . the world's
      axis = math.max(axis, math.sqrt(math.max(0, 1 - c * c)))
    end
    assert(anchor < 3e-5, "anchor moved " .. anchor)
    assert(axis < 5e-6, "axis turned " .. axis)
    assert(j.axis_error < 3e-5 and j.gap < 3e-5, "joint.c's own measures")
    near(w:energy(), e0, 1e-3, "energy")
  end)

  for _, deg in ipairs { 0, 30, 60 } do
    it(("a prismatic joint at %d degrees from the vertical slides at g cos(angle), without turning"):format(deg), function()
      local a = math.rad(deg)
      local w = qp_world()
      local ax = { math.sin(a), -math.cos(a), 0 }
      local b = w:box { size = { 0.3, 0.3, 0.3 }, position = { 0, 2, 0 }, mass = 2, orientation = impetus.quat.from_axis_angle({ 1, 1, 0 }, 0.4) }
      local j = w:joint { type = "prismatic", a = b, anchor = { 0, 2, 0 }, axis = ax }
      for _ = 1, 60 do assert(w:step(1 / 60)) end
      local p = b.position
      local along = p[1] * ax[1] + (p[2] - 2) * ax[2]
      near(along, 0.5 * g * math.cos(a), 1e-9, "distance along the axis after 1 s")
      near(j.position, along, 1e-12, "joint.position")
      local off = math.sqrt((p[1] - along * ax[1]) ^ 2 + (p[2] - 2 - along * ax[2]) ^ 2 + p[3] ^ 2)
      assert(off < 1e-9, "off the axis " .. off)
      local om = b.angular_velocity
      assert(math.abs(om[1]) + math.abs(om[2]) + math.abs(om[3]) < 1e-9, "turning")
    end)
  end

  it("a rigid joint welds two tumbling boxes into one body: momentum and angular momentum kept, the weld within 3e-5", function()
    local w = qp_world { gravity = { 0, 0, 0 } }
    local a = w:box { size = { 1, 0.3, 0.3 }, position = { 0, 0, 0 }, mass = 1 }
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
    local e0, worst = w:energy(), 0
    for _ = 1, 300 do
      assert(w:step(1 / 60))
      worst = math.max(worst, j.gap, j.axis_error)
    end
    local P1, L1 = momenta()
    for k = 1, 3 do
      near(P1[k], P0[k], 1e-9, "momentum")
      -- the joint forces are internal (equal and opposite at one point) so every evaluation has dL/dt = 0;
      -- L = sum x x m v + L_body is quadratic in the state, which RK4 keeps only to its truncation error
      near(L1[k], L0[k], 1e-5, "angular momentum")
    end
    assert(worst < 3e-5, "weld error " .. worst)
    near(w:energy(), e0, 2e-4, "energy")
  end)

  it("a bead on a spinning rod (hinge to the world, prismatic on the rod): energy and angular momentum kept, no contact between the two", function()
    local w = qp_world { gravity = { 0, 0, 0 } }
    local rod = w:box { size = { 4, 0.1, 0.1 }, position = { 0, 0, 0 }, mass = 1 }
    local bead = w:box { size = { 0.2, 0.2, 0.2 }, position = { 0.5, 0, 0 }, mass = 0.5 } -- overlaps the rod
    w:joint { type = "hinge", a = rod, anchor = { 0, 0, 0 }, axis = { 0, 0, 1 } }
    local j = w:joint { type = "prismatic", a = bead, b = rod, anchor = { 0.5, 0, 0 }, axis = { 1, 0, 0 } }
    rod.angular_velocity, bead.angular_velocity, bead.velocity = { 0, 0, 2 }, { 0, 0, 2 }, { 0, 1, 0 }
    w:collide()
    for _, c in ipairs(w:solve_contacts()) do assert(c.joint, "a contact between joined bodies") end
    local function Lz()
      local s = rod.angular_momentum[3] + bead.angular_momentum[3]
      for _, b in ipairs { rod, bead } do
        local p, v = b.position, b.velocity
        s = s + b.mass * (p[1] * v[2] - p[2] * v[1])
      end
      return s
    end
    local e0, L0, worst = w:energy(), Lz(), 0
    for _ = 1, 60 do
      assert(w:step(1 / 60))
      worst = math.max(worst, j.gap, j.axis_error)
    end
    assert(j.position > 0.5, "the bead flew outwards: " .. j.position)
    assert.are.equal(0, w:contact_stats().impacts) -- the overlap of joined bodies is no impact either
    near(w:energy(), e0, 2e-5, "energy")
    near(Lz(), L0, 1e-6, "angular momentum")
    assert(worst < 2e-5, "joint error " .. worst)
  end)

  it("refuses limits and motors (the impulse mode's) at creation and through the setters", function()
    local w = qp_world()
    local arm = w:box { size = { 1, 0.1, 0.1 }, position = { 0.5, 2, 0 } }
    assert.has_error(function() w:joint { type = "hinge", a = arm, anchor = { 0, 2, 0 }, axis = { 0, 0, 1 }, limits = { -1, 1 } } end)
    local j = w:joint { type = "hinge", a = arm, anchor = { 0, 2, 0 }, axis = { 0, 0, 1 } }
    local ok, err = pcall(function() j.limits = { -1, 1 } end)
    assert.is_false(ok)
    assert.matches('joint.limits: the exact mode %("qp"%) cannot hold joint limits', err)
    ok, err = pcall(function() j.motor = { speed = 1, max = 10 } end)
    assert.is_false(ok)
    assert.matches('joint.motor: the exact mode %("qp"%) cannot drive joint motors', err)
    j.limits, j.motor = nil, nil -- removing is fine
    assert.is_nil(j.limits)
  end)
end)

describe("colliding contact: time of impact by regula falsi", function()
  it("a box dropped with e = 0.5 rebounds at half its impact speed, never more than 2 mm deep", function()
    local w = qp_world()
    w.restitution = 0.5
    ground(w)
    local b = w:box { size = { 1, 1, 1 }, position = { 0, 2, 0 }, mass = 1 }
    local v_in, v_out, lowest = 0, nil, 10
    for _ = 1, 60 do
      local v = b.velocity[2]
      w:step(1 / 60)
      lowest = math.min(lowest, b.position[2])
      if not v_out and b.velocity[2] > 0 then v_in, v_out = v, b.velocity[2] end
    end
    assert(v_out, "it bounced")
    assert(w:contact_stats().impacts >= 1, "the step was cut at the impact")
    -- impact speed sqrt(2 g 1.5) = 5.42 m/s; the rebound loses a fraction of a step of gravity
    assert(v_out <= 0.5 * math.sqrt(2 * g * 1.5) + 1e-9 and v_out >= 0.5 * math.sqrt(2 * g * 1.5) - g / 60, "rebound speed " .. v_out)
    assert(lowest > 0.5 - 2.5e-3, "deepest " .. (0.5 - lowest) .. " m")
  end)
end)

describe("S2's stack of bricks", function()
  local function stack(overhang)
    local w = qp_world()
    w.friction = 0.5
    ground(w)
    local top
    for i = 0, 6 do
      top = w:box { size = { 1.6, 0.4, 0.8 }, position = { i * overhang, 0.2 + 0.4 * i, 0 }, mass = 2 }
    end
    local y0 = top.position[2]
    for _ = 1, 120 do assert(w:step(1 / 60)) end
    return top.position[2] - y0, top
  end

  it("balanced (each brick 0.1 m past the one below): rests, the top brick within 1 mm", function()
    local dy, top = stack(0.1)
    assert(math.abs(dy) < 1e-3, "top brick moved " .. dy)
    assert(math.abs(top.position[1] - 0.6) < 1e-3, "sideways " .. top.position[1])
  end)

  it("overbalanced (0.3 m: the centre of mass above the first brick passes its edge): topples", function()
    local dy = stack(0.3)
    assert(dy < -0.5, "top brick fell only " .. dy)
  end)
end)

describe("a heap of 20 boxes (degenerate contacts of every kind)", function()
  for _, dense in ipairs { 256, 0 } do
  it(("falls, collides and settles with friction%s: never NaN, every impact cut within a few mm"):format(dense == 0 and " (every group on the Gauss-Seidel fallback)" or ""), function()
    local w, bs, lowest, deepest = require("qp_heap")(3, dense)
    -- the time of impact cuts at 0.25-1 mm of new penetration; new corners of an already touching
    -- pair (a box rocking onto the next corner) are cut too, several corners of one landing add up
    assert(lowest > -0.003, "through the floor " .. lowest)
    assert(deepest < 0.003, "deepest " .. deepest)
    local ke = 0
    for _, b in ipairs(bs) do ke = ke + b:kinetic_energy() end
    assert(ke < 1e-9, "kinetic energy after 5 s " .. ke)
    assert(w:contact_stats().impacts > 100, "impacts were cut")
    assert(dense > 0 or w:contact_stats().fallbacks > 0, "the fallback solved")
  end)
  end
end)

describe("islands over world.qp_dense_max rows (the projected Gauss-Seidel fallback)", function()
  local function tower(dense_max)
    local w = qp_world()
    w.qp_dense_max = dense_max
    ground(w)
    local bs = {}
    for i = 0, 2 do bs[#bs + 1] = w:box { size = { 1, 1, 1 }, position = { 0.1 * i, 0.5 + i, 0 }, mass = 1 + i } end
    w:collide()
    return w, bs
  end

  it("gives the dense solver's forces: each level carries the weight above it, complementarity to 1e-3", function()
    local w = tower(4) -- 12 rows > 4
    assert.are.equal(4, w.qp_dense_max)
    local cs, info = w:solve_contacts()
    assert.are.equal("ok", info.status)
    assert.are.equal(12, #cs)
    local level, worst = {}, 0
    for _, c in ipairs(cs) do
      local y = math.floor(c.point[2] + 0.5)
      level[y] = (level[y] or 0) + c.force
      assert(c.force >= 0, "f >= 0")
      worst = math.max(worst, -c.acceleration, math.abs(c.force * c.acceleration) / (6 * g))
    end
    near(level[0], 6 * g, 1e-4 * 6 * g, "the floor")
    near(level[1], 5 * g, 1e-4 * 6 * g, "first on second")
    near(level[2], 3 * g, 1e-4 * 6 * g, "the top box")
    assert(worst < 1e-3 * g, "d'' >= 0 and f d'' = 0 to " .. worst)
    assert.are.equal(1, w:contact_stats().fallbacks)
    local dense = tower(4096)
    dense:solve_contacts()
    assert.are.equal(0, dense:contact_stats().fallbacks)
  end)

  it("holds the tower at rest for 2 s of steps (within 10 um)", function()
    local w, bs = tower(4)
    for _ = 1, 120 do assert(w:step(1 / 60)) end
    assert(w:contact_stats().fallbacks >= 480, "every evaluation fell back")
    for i, b in ipairs(bs) do
      -- each contact settles IMP_QP_SLOP = 10 um deep (the dense solver: to 1e-9 m; Gauss-Seidel: measured 0.05 um)
      near(b.position[2], 0.5 + (i - 1) - i * 1e-5, 1e-6, "box " .. i .. " height")
      near(b.position[1], 0.1 * (i - 1), 2e-5, "box " .. i .. " sideways") -- measured 9 um for the bottom box
    end
  end)

  it("is refused outside [0, 4096] (the dense matrix is rows^2 doubles)", function()
    local w = qp_world()
    local msg = "world.qp_dense_max: must be an integer in [0, 4096]"
    assert.has_error(function() w.qp_dense_max = -1 end, msg)
    assert.has_error(function() w.qp_dense_max = 0.5 end, msg)
    assert.has_error(function() w.qp_dense_max = 4097 end, msg)
    assert.has_error(function() w.qp_dense_max = 100000 end, msg)
    w.qp_dense_max = 4096
    assert.are.equal(4096, w.qp_dense_max)
  end)
end)

-- d'' = A f + b checked against the world's own accelerations: b at f = 0, and A column by column by
-- finite differences (d'' is linear in f: the differences are exact to round-off)
local function check_system(w, A, b, n)
  local f0 = {}
  for i = 1, n do f0[i] = 0 end
  local d0 = w:contact_accelerations(f0)
  for i = 1, n do near(d0[i], b[i], 1e-12, "b") end
  for j = 1, n do
    local f = {}
    for i = 1, n do f[i] = (i == j) and 1e-3 or 0 end
    local d1 = w:contact_accelerations(f)
    for i = 1, n do near((d1[i] - d0[i]) / 1e-3, A[i][j], 1e-9, ("A[%d][%d]"):format(i, j)) end
  end
end

describe("a block of boxes side by side (an island solved column by column)", function()
  -- 6 x 6 columns of 6 unit boxes touching: thousands of contact rows, most between the columns with no
  -- force (the bridges), enough for the per-contact passes to run in chunks on both threads
  local script = [[
    local impetus = require "impetus"
    local w = impetus.world {}
    w.contact = "qp"
    w:body { static = true, shapes = { { type = "plane" } } }
    for x = 0, 5 do
      for z = 0, 5 do
        for y = 0, 5 do w:box { size = { 1, 1, 1 }, position = { x, 0.5 + y, z }, mass = 1 } end
      end
    end
    for _ = 1, 4 do w:step(1 / 60) end
    local out, top, speed = {}, -math.huge, 0
    for i, v in ipairs(w:body_state()) do out[i] = string.format("%a", v) end
    for _, b in ipairs(w:bodies()) do
      local v = b.velocity
      top, speed = math.max(top, b.position[2]), math.max(speed, math.sqrt(v[1] ^ 2 + v[2] ^ 2 + v[3] ^ 2))
    end
    return string.format("%d %.9f %.9g\n", #w:contacts(), top, speed) .. table.concat(out, " ")
  ]]

  it("stands: every box at rest, the top ones 5.5 m up less the six resting contacts' slop (10 um each)", function()
    local here = load(script)()
    local touching, top, speed = here:match("^(%d+) (%S+) (%S+)")
    assert.is_true(tonumber(touching) > 300, "the pairs touch")
    near(tonumber(top), 5.5 - 3e-5, 3e-5, "top box height")
    assert.is_true(tonumber(speed) < 1e-3, "the fastest box moves at " .. speed .. " m/s")
  end)

  it("gives the same bits on one thread and two, and on the vector path and the scalar one (IMPETUS_SIMD=0)", function()
    helpers.same_elsewhere(script, { "IMPETUS_THREADS=1", "IMPETUS_SIMD=0", "IMPETUS_THREADS=1 IMPETUS_SIMD=0" })
  end)
end)

describe("the A matrix and b vector", function()
  -- a tilted box leaning on a box, spinning: vertex/face contacts on two dynamic bodies
  local function scene()
    local w = qp_world()
    ground(w)
    w:box { size = { 2, 1, 2 }, position = { 0, 0.5, 0 }, mass = 5, angular_velocity = { 0, 0.3, 0 } }
    w:box { size = { 1, 1, 1 }, position = { 0.2, 1.45, 0.1 }, axis = { 1, 0.3, 0.2 }, angle = 0.4, mass = 1,
      velocity = { 0.1, 0, 0 }, angular_velocity = { 0.5, -0.2, 0.7 } }
    w:collide()
    return w
  end

  it("is symmetric positive semidefinite", function()
    local w = scene()
    local A, b, cs = w:contact_system()
    assert(#cs >= 5, "contacts: " .. #cs)
    local n = #cs
    for i = 1, n do
      for j = 1, n do near(A[i][j], A[j][i], 1e-14, "A symmetric") end
    end
    -- x^T A x >= 0 for many x, and the Cholesky-like elimination never meets a negative pivot
    local seed = 7
    for _ = 1, 200 do
      local x = {}
      for i = 1, n do seed = (seed * 1103515245 + 12345) % 2147483648; x[i] = seed / 2147483648 - 0.5 end
      local q = 0
      for i = 1, n do for j = 1, n do q = q + x[i] * A[i][j] * x[j] end end
      assert(q >= -1e-12, "x^T A x = " .. q)
    end
  end)

  it("equals the finite differences of d'' with respect to f, and b = d''(f = 0)", function()
    local w = scene()
    local A, b, cs = w:contact_system()
    local n = #cs
    check_system(w, A, b, n)
  end)

  it("with typed joints' rows (linear and angular): symmetric, and the finite differences of d''", function()
    local s2 = 1 / math.sqrt(2)
    local w = qp_world()
    ground(w)
    local arm = w:box { size = { 1, 0.2, 0.3 }, position = { 0.5, 2, 0 }, mass = 2, angular_velocity = { 0, 1.2, 0.7 } }
    local slider = w:box { size = { 0.3, 0.3, 0.3 }, position = { 0.8, 2, 0 }, mass = 0.5, velocity = { 0.3, 0.2, -0.1 } }
    w:joint { type = "hinge", a = arm, anchor = { 0, 2, 0 }, axis = { 0, s2, s2 } }
    w:joint { type = "prismatic", a = slider, b = arm, anchor = { 0.8, 2, 0 }, axis = { 1, 0, 0 } }
    local box = w:box { size = { 1, 1, 1 }, position = { 3, 0.5, 0 }, mass = 1, angular_velocity = { 0.2, 0.1, 0 } }
    w:collide()
    local A, b, cs = w:contact_system()
    local n = #cs
    assert.are.equal(14, n) -- 5 + 5 joint rows, 4 corners
    for i = 1, n do
      for j = 1, n do near(A[i][j], A[j][i], 1e-14, "A symmetric") end
    end
    check_system(w, A, b, n)
    -- the solved rows hold: every joint row's d'' = 0 and the box rests
    local sol, info = w:solve_contacts()
    assert.are.equal("ok", info.status)
    for _, c in ipairs(sol) do
      if c.joint then near(c.acceleration, 0, 1e-9, "joint row d''") else assert(c.acceleration > -1e-9) end
    end
    near(box.position[2], 0.5, 0, "the box untouched by the query")
  end)

  -- b against the motion itself: the material contact points and normal of each contact, followed
  -- through a short free flight, give d(h) = d + h d' + h^2/2 d'' + O(h^3); Richardson on two step
  -- sizes leaves O(h^2). Both bodies move and spin, so the ndot terms and omega x (omega x r) count.
  local function b_by_flight(edge, h)
    local quat = impetus.quat
    local w = impetus.world {}
    w.contact = "none" -- contacts detected, no response: free flight
    if edge then -- two boxes edge on edge: the top edge of one (along z) across the bottom edge of the other (along x)
      local s2 = math.sqrt(2) / 2
      w:box { size = { 1, 1, 1 }, position = { 0, 0, 0 }, axis = { 0, 0, 1 }, angle = math.pi / 4, mass = 2,
        velocity = { 0.3, -0.2, 0.1 }, angular_velocity = { 0.4, 0.9, -0.6 } }
      w:box { size = { 1, 1, 1 }, position = { 0, 2 * s2 - 1e-9, 0 }, axis = { 1, 0, 0 }, angle = math.pi / 4, mass = 1,
        velocity = { -0.1, 0.5, 0.2 }, angular_velocity = { -0.7, 0.3, 1.1 } }
    else -- a tilted box with one corner on the top face of a spinning box
      w:box { size = { 2, 1, 2 }, position = { 0, 0.5, 0 }, mass = 5, velocity = { 0.2, 0.1, 0 }, angular_velocity = { 0.3, 0.8, -0.4 } }
      local q = quat.from_axis_angle({ 1, 0.3, 0.2 }, 0.4)
      local low = math.huge
      for _, c in ipairs({ { -1, -1, -1 }, { 1, -1, -1 }, { -1, 1, -1 }, { 1, 1, -1 }, { -1, -1, 1 }, { 1, -1, 1 }, { -1, 1, 1 }, { 1, 1, 1 } }) do
        low = math.min(low, quat.rotate(q, { 0.5 * c[1], 0.5 * c[2], 0.5 * c[3] })[2])
      end
      w:box { size = { 1, 1, 1 }, position = { 0.1, 1 - low - 1e-9, 0.2 }, orientation = q, mass = 1,
        velocity = { 0.1, -0.3, 0.05 }, angular_velocity = { 0.5, -0.2, 0.7 } }
    end
    w:collide()
    local _, b, cs = w:contact_system()
    local d0, v0 = w:contact_separations()
    w:step(h)
    local d1 = w:contact_separations()
    local fd = {}
    for i = 1, #cs do fd[i] = 2 * (d1[i] - d0[i] - h * v0[i]) / h ^ 2 end
    return b, fd, cs
  end

  for _, edge in ipairs({ false, true }) do
    it("b is d'' of the moving contact (" .. (edge and "edge/edge" or "vertex/face") .. "): the ndot terms checked against the motion", function()
      local b, f1, cs = b_by_flight(edge, 2e-3)
      local _, f2 = b_by_flight(edge, 1e-3)
      assert.are.equal(1, #cs)
      assert.are.equal(edge, cs[1].edge)
      near(b[1], 2 * f2[1] - f1[1], 1e-4 * (1 + math.abs(b[1])), "b")
    end)
  end

  it("A for a box on the floor is S4's: A_ij = 1/m + (r_i x n) . I^-1 (r_j x n), every pair of corners coupled", function()
    local w = qp_world { gravity = { 0, 0, 0 } }
    ground(w)
    w:box { size = { 1, 1, 1 }, position = { 0, 0.5, 0 }, mass = 2 }
    w:collide()
    local A = w:contact_system()
    -- a unit cube of mass 2: I = m/6 = 1/3; corner r = (+-1/2, -1/2, +-1/2), n = y:
    -- r x n = (-r_z... ) -> A_ij = 1/m + (r_i x n).(r_j x n) / I = 1/2 + 3 (x_i x_j + z_i z_j)
    local _, _, cs = w:contact_system()
    for i = 1, 4 do
      for j = 1, 4 do
        local pi, pj = cs[i].point, cs[j].point
        near(A[i][j], 0.5 + 3 * (pi[1] * pj[1] + pi[3] * pj[3]), 1e-12, "A entry")
      end
    end
  end)
end)

describe("friction in collision impulses", function()
  -- a solid ball (I = 2/5 m r^2) hits the floor with normal speed vn and tangential speed vt, no spin.
  -- The normal impulse is m (1 + e) vn. The contact point's tangential velocity changes by
  -- J_t (1/m + r^2/I) = 7 J_t / (2 m): it slides through the impact if mu m (1 + e) vn < 2 m vt / 7,
  -- and the centre loses mu (1 + e) vn; otherwise it leaves rolling, v_t = 5 vt / 7, omega = v_t / r.
  local r, m = 0.5, 2
  local function hit(mu, e, vt, vn)
    local w = qp_world { gravity = { 0, 0, 0 } }
    w.friction = mu
    ground(w)
    local b = w:sphere { radius = r, position = { 0, r, 0 }, velocity = { vt, -vn, 0 }, mass = m }
    w:collide()
    local cs, info = w:resolve_collisions(e)
    assert.are.equal("ok", info.status)
    assert.are.equal(1, #cs)
    return b, cs[1]
  end

  for _, c in ipairs { { 0.2, 0.5, 4, 3 }, { 0.1, 0, 4, 3 }, { 0.3, 1, 6, 2 } } do
    local mu, e, vt, vn = c[1], c[2], c[3], c[4]
    it(("slides through the impact (mu %g, e %g): the tangential velocity drops by mu (1 + e) vn"):format(mu, e), function()
      assert(mu * (1 + e) * vn < 2 * vt / 7, "a sliding case")
      local b, ct = hit(mu, e, vt, vn)
      near(b.velocity[2], e * vn, 1e-12, "normal rebound")
      near(b.velocity[1], vt - mu * (1 + e) * vn, 1e-12, "tangential velocity")
      -- the spin from the friction impulse's torque: I omega = r J_t
      near(b.angular_velocity[3], -r * mu * m * (1 + e) * vn / (0.4 * m * r * r), 1e-12, "spin")
      near(ct.impulse, m * (1 + e) * vn, 1e-12, "normal impulse")
      near(ct.friction[1], -mu * ct.impulse, 1e-12, "friction impulse on the cone")
    end)
  end

  it("sticks (mu 0.6, e 0.5, vt 1, vn 3): leaves rolling at 5 vt / 7, inside the cone", function()
    local b, ct = hit(0.6, 0.5, 1, 3)
    near(b.velocity[1], 5 / 7, 1e-12, "rolling speed")
    near(b.angular_velocity[3], -5 / 7 / r, 1e-12, "rolling spin")
    near(b.velocity[2], 1.5, 1e-12, "normal rebound")
    assert(math.abs(ct.friction[1]) < 0.6 * ct.impulse, "inside the cone")
  end)

  it("in a step: a ball thrown at the floor loses mu times the normal velocity change at the bounce", function()
    local w = qp_world()
    w.friction, w.restitution = 0.1, 0.6
    ground(w)
    local b = w:sphere { radius = r, position = { 0, 2, 0 }, velocity = { 5, 0, 0 }, mass = m }
    local before, after
    for _ = 1, 60 do
      local v = b.velocity
      w:step(1 / 60)
      if b.velocity[2] > 0 then before, after = v, b.velocity; break end
    end
    assert(after, "it bounced")
    assert(w:contact_stats().impacts >= 1, "cut at the impact")
    near(before[1], 5, 1e-12, "no friction before the impact")
    -- the step's change of v_y is the impulse's (1 + e) vn less a step of gravity; it slides through
    -- (mu (1 + e) vn = 0.87 < 2 vt / 7 = 1.43 m/s), so v_x drops by mu (1 + e) vn exactly, and the
    -- rebound is e vn
    local jn = after[2] - before[2] + g / 60
    local vn = jn / 1.6
    assert(vn > 5, "impact speed " .. vn)
    near(before[1] - after[1], 0.1 * jn, 1e-9, "tangential speed lost")
    assert(after[2] <= 0.6 * vn and after[2] >= 0.6 * vn - g / 60, "rebound " .. after[2])
  end)
end)

describe("simultaneous collisions (S2 section 8)", function()
  local r = 0.5
  it("Fig. 11: three equal balls, e = 1: (-v/3, 2v/3, 2v/3), momentum and energy conserved", function()
    local w = qp_world { gravity = { 0, 0, 0 } }
    local v = 3
    local a = w:sphere { radius = r, position = { 0, 0, 0 }, velocity = { v, 0, 0 }, mass = 1 }
    local b = w:sphere { radius = r, position = { 2 * r, 0, 0 }, mass = 1 }
    local c = w:sphere { radius = r, position = { 4 * r, 0, 0 }, mass = 1 }
    w:collide()
    local e0 = w:kinetic_energy()
    local cs, info = w:resolve_collisions(1)
    assert.are.equal("ok", info.status)
    assert.are.equal(2, #cs)
    near(a.velocity[1], -v / 3, 1e-12, "ball 1")
    near(b.velocity[1], 2 * v / 3, 1e-12, "ball 2")
    near(c.velocity[1], 2 * v / 3, 1e-12, "ball 3")
    near(w:kinetic_energy(), e0, 1e-12, "kinetic energy")
  end)

  it("Fig. 12: a heavy ball on a light ball on the floor, inelastic: both at rest after one solve", function()
    local w = qp_world()
    ground(w)
    local light = w:sphere { radius = r, position = { 0, r, 0 }, mass = 1 }
    local heavy = w:sphere { radius = r, position = { 0, 3 * r, 0 }, mass = 9, velocity = { 0, -2, 0 } }
    w:collide()
    local cs = w:resolve_collisions(0)
    assert.are.equal(2, #cs)
    near(heavy.velocity[2], 0, 1e-12, "heavy ball")
    near(light.velocity[2], 0, 1e-12, "light ball")
    -- the impulses: the floor takes the heavy ball's momentum
    local total = 0
    for _, c in ipairs(cs) do total = math.max(total, c.impulse) end
    near(total, 18, 1e-12, "floor impulse")
  end)

  it("Fig. 13: A struck from below by C is pushed away from B: zero impulse between A and B", function()
    local w = qp_world { gravity = { 0, 0, 0 } }
    local A = w:sphere { radius = r, position = { 0, 0, 0 }, mass = 1 }
    local B = w:sphere { radius = r, position = { -2 * r, 0, 0 }, mass = 1 }
    local s = math.rad(20) -- C clear of B
    local C = w:sphere { radius = r, position = { -2 * r * math.sin(s), -2 * r * math.cos(s), 0 }, mass = 1,
      velocity = { 0, 2, 0 } }
    w:collide()
    local cs = w:resolve_collisions(0.5)
    assert.are.equal(2, #cs)
    for _, c in ipairs(cs) do
      local ab = (c.a == A and c.b == B) or (c.a == B and c.b == A)
      if ab then assert.are.equal(0, c.impulse) else assert(c.impulse > 0) end
    end
    assert(A.velocity[1] > 0, "A moves away from B")
    near(B.velocity[1], 0, 1e-15, "B untouched")
  end)
end)

-- Curved surfaces (contact_qp.c, "Contact kinematics: curved surfaces"): a sphere or a capsule touches
-- through a point that moves over its surface as it rolls; d is measured from the core, so a rolling
-- body neither sinks nor gains energy (closed forms: uniform rolling, v = omega R; a solid sphere that
-- skids ends rolling at 5/7 v0, its angular momentum about the contact point m v0 R conserved).
describe("rolling and curved contact", function()
  local roller = require("fidelity").roller

  for _, case in ipairs { { "sphere", 3 }, { "sphere", 1 }, { "capsule", 3 } } do
    it(string.format("a %s rolling at %g m/s keeps its speed and energy to 0.1 %% over 10 s and sinks < 0.1 mm", case[1], case[2]), function()
      local w, b = roller(case[1], case[2], 0.5)
      local e0, lowest = b:kinetic_energy(), math.huge
      for _ = 1, 600 do
        w:step(1 / 60)
        lowest = math.min(lowest, b.position[2])
      end
      near(b.velocity[1], case[2], 1e-3 * case[2], "speed")
      near(b:kinetic_energy(), e0, 1e-3 * e0, "kinetic energy")
      assert(lowest > 0.5 - 1e-4, string.format("sank to %.6f m", lowest))
      local om = b.angular_velocity
      assert(math.abs(om[1]) + math.abs(om[2]) < 1e-6, "it turned off its rolling axis: " .. om[1] .. ", " .. om[2])
    end)
  end

  it("a frictionless ball spinning in place keeps its spin and its place", function()
    local w, b = roller("sphere", 0, 0, { 0, 0, -10 })
    for _ = 1, 600 do w:step(1 / 60) end
    near(b.angular_velocity[3], -10, 1e-9, "spin")
    near(b.position[1], 0, 1e-9, "x")
    assert(b.position[2] > 0.5 - 1e-4, "sank to " .. b.position[2])
  end)

  for _, dt in ipairs { 1 / 60, 1 / 240 } do
    it(string.format("a skidding ball ends rolling at 5/7 of its speed (dt 1/%d)", math.floor(1 / dt + 0.5)), function()
      local w, b = roller("sphere", 4, 0.3, { 0, 0, 0 })
      for _ = 1, math.floor(3 / dt) do w:step(dt) end
      near(b.velocity[1], 4 * 5 / 7, 2e-3 * 4 * 5 / 7, "rolling speed")
      near(-b.angular_velocity[3] * 0.5, b.velocity[1], 1e-6, "omega R = v")
    end)
  end

  -- a frictionless ball over a curved or sharp support leaves it where g cos(theta) = v^2 / L (L the
  -- radius of its centre's circle), with v^2 = v0^2 + 2 g L (1 - cos theta) by energy:
  -- cos(theta) = (v0^2 / (g L) + 2) / 3; in free flight after that its horizontal speed stays
  -- v cos(theta) = sqrt(g L cos(theta)) cos(theta)
  local function leaves_at(v0, L)
    local c = (v0 * v0 / (g * L) + 2) / 3
    return math.sqrt(g * L * c) * c
  end

  it("a ball sliding off the top of a fixed sphere leaves it at cos(theta) = 2/3 (two curved sides)", function()
    local w = qp_world {}
    w.sleeping = false
    local R, r, v0 = 1, 0.25, 0.2
    w:sphere { static = true, radius = R, position = { 0, 0, 0 } }
    local b = w:sphere { radius = r, position = { 0, R + r, 0 }, velocity = { v0, 0, 0 } }
    for _ = 1, 960 do w:step(1 / 240) end -- 4 s: long gone
    assert(b.position[2] < 0.5 * (R + r), "it never left: y " .. b.position[2])
    near(b.velocity[1], leaves_at(v0, R + r), 5e-4 * leaves_at(v0, R + r), "horizontal speed after it left")
  end)

  it("a ball sliding over the edge of a box pivots on the edge and leaves it at cos(theta) = 2/3 (a core on an edge)", function()
    local w = qp_world {}
    w.sleeping = false
    local r, v0 = 0.25, 0.2
    w:box { static = true, size = { 2, 1, 2 }, position = { -1, -0.5, 0 } } -- its top face y = 0 ends at x = 0
    local b = w:sphere { radius = r, position = { -0.3, r, 0 }, velocity = { v0, 0, 0 } }
    for _ = 1, 960 do w:step(1 / 240) end -- 4 s: at the edge after 1.5 s
    assert(b.position[2] < -0.5, "it never left: y " .. b.position[2])
    near(b.velocity[1], leaves_at(v0, r), 5e-4 * leaves_at(v0, r), "horizontal speed after it left")
  end)
end)
