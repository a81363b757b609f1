-- Rigid body dynamics (S3 "Rigid body dynamics"): mass properties against closed forms, forces and
-- torques (S3 5.2-5.5), torque-free motion, quaternions, static and kinematic bodies, every solver.
local impetus = require "impetus"
local helpers = require "helpers"
local quat = impetus.quat

local G = 9.81

local function near_mat(m, e, tol, what)
  for i = 1, 3 do
    for j = 1, 3 do helpers.near(m[i][j], e[i][j], tol, string.format("%s[%d][%d]", what, i, j)) end
  end
end

local function near_vec(v, e, tol, what)
  for k = 1, 3 do helpers.near(v[k], e[k], tol, string.format("%s[%d]", what, k)) end
end

local function err_of(f)
  local ok, e = pcall(f)
  assert.is_false(ok, "expected an error")
  return tostring(e)
end

local function zero_g() return impetus.world { gravity = { 0, 0, 0 } } end

describe("mass properties", function()
  it("of a block follow S3's closed form M/12 diag(y0^2+z0^2, x0^2+z0^2, x0^2+y0^2)", function()
    local w = zero_g()
    local x0, y0, z0, M = 2, 0.5, 1.2, 7
    local b = w:box { size = { x0, y0, z0 }, mass = M }
    helpers.near(b.mass, M, 1e-12, "mass")
    near_mat(b.inertia_body, { { M / 12 * (y0 ^ 2 + z0 ^ 2), 0, 0 }, { 0, M / 12 * (x0 ^ 2 + z0 ^ 2), 0 },
      { 0, 0, M / 12 * (x0 ^ 2 + y0 ^ 2) } }, 1e-12, "I_body")
    -- density instead of mass: M = rho V
    local d = w:box { size = { x0, y0, z0 }, density = 500 }
    helpers.near(d.mass, 500 * x0 * y0 * z0, 1e-9, "mass from density")
  end)

  it("in the world frame are R I_body R^T", function()
    local w = zero_g()
    local q = quat.from_axis_angle({ 1, 2, 3 }, 0.7)
    local b = w:box { size = { 2, 0.5, 1.2 }, mass = 3, orientation = q }
    local R, Ib = quat.to_matrix(q), b.inertia_body
    local I = {}
    for i = 1, 3 do
      I[i] = {}
      for j = 1, 3 do
        local s = 0
        for k = 1, 3 do for l = 1, 3 do s = s + R[i][k] * Ib[k][l] * R[j][l] end end
        I[i][j] = s
      end
    end
    near_mat(b.inertia, I, 1e-12, "I")
    assert.is_true(math.abs(b.inertia[1][2]) > 0.01, "a rotated block has products of inertia")
  end)

  it("of spheres and capsules follow their closed forms", function()
    local w = zero_g()
    local r, L, rho = 0.3, 1.1, 800
    local s = w:sphere { radius = r, density = rho }
    local ms = 4 / 3 * math.pi * r ^ 3 * rho
    helpers.near(s.mass, ms, 1e-9, "sphere mass")
    helpers.near(s.inertia_body[1][1], 0.4 * ms * r ^ 2, 1e-12, "sphere I")
    local c = w:capsule { radius = r, length = L, density = rho }
    local mc = math.pi * r ^ 2 * L * rho
    helpers.near(c.mass, mc + ms, 1e-9, "capsule mass")
    helpers.near(c.inertia_body[2][2], mc * r ^ 2 / 2 + 0.4 * ms * r ^ 2, 1e-9, "capsule I_yy (axis)")
    -- transverse: cylinder + hemispheres shifted by the parallel-axis theorem, written out independently
    local h = L / 2
    local hemi_own = 83 / 320 * (ms / 2) * r ^ 2 -- a hemisphere about its own centroid
    local ixx = mc * (3 * r ^ 2 + L ^ 2) / 12 + 2 * (hemi_own + ms / 2 * (h + 3 * r / 8) ^ 2)
    helpers.near(c.inertia_body[1][1], ixx, 1e-9, "capsule I_xx")
  end)

  it("of a box-shaped hull equal the box's closed form (quickhull + divergence theorem)", function()
    local w = zero_g()
    local pts = {}
    for _, x in ipairs { -1, 1 } do
      for _, y in ipairs { -0.5, 0.5 } do
        for _, z in ipairs { -0.25, 0.25 } do pts[#pts + 1] = { x + 3, y, z } end
      end
    end
    math.randomseed(7)
    for _ = 1, 200 do -- interior points and points on the faces must not change anything
      pts[#pts + 1] = { 3 + math.random() * 2 - 1, math.random() - 0.5, (math.random() - 0.5) * 0.5 }
      pts[#pts + 1] = { 3 + (math.random() * 2 - 1), 0.5, (math.random() - 0.5) * 0.5 }
    end
    local h = w:hull { points = pts, density = 1000 }
    local info = h:shapes()[1]
    assert.are.equal(8, info.vertex_count)
    assert.are.equal(6, info.face_count)
    local M = 1000 * 2 * 1 * 0.5
    helpers.near(h.mass, M, 1e-9, "mass")
    near_vec(h.center_of_mass, { 3, 0, 0 }, 1e-12, "centre of mass")
    near_mat(h.inertia_body, { { M / 12 * (1 + 0.25), 0, 0 }, { 0, M / 12 * (4 + 0.25), 0 }, { 0, 0, M / 12 * (4 + 1) } },
      1e-9, "I")
  end)

  it("of a tetrahedron hull match its integrals (V = 1/6, centroid 1/4, I_xx = rho/80, I_xy = rho/480)", function()
    local w = zero_g()
    local t = w:hull { points = { { 0, 0, 0 }, { 1, 0, 0 }, { 0, 1, 0 }, { 0, 0, 1 } }, density = 1000 }
    helpers.near(t.mass, 1000 / 6, 1e-9, "mass")
    near_vec(t.center_of_mass, { 0.25, 0.25, 0.25 }, 1e-12, "centroid")
    local a, b = 1000 / 80, 1000 / 480
    near_mat(t.inertia_body, { { a, b, b }, { b, a, b }, { b, b, a } }, 1e-9, "I")
    helpers.near(t:shapes()[1].volume, 1 / 6, 1e-12, "volume")
  end)

  it("of compounds are parallel-axis sums: two unit cubes side by side are one 2x1x1 block", function()
    local w = zero_g()
    local c = w:body { position = { 1, 2, 3 }, shapes = {
      { type = "box", size = { 1, 1, 1 }, position = { -0.5, 0, 0 } },
      { type = "box", size = { 1, 1, 1 }, position = { 0.5, 0, 0 } } } }
    local one = w:box { size = { 2, 1, 1 } }
    near_mat(c.inertia_body, one.inertia_body, 1e-9, "I")
    helpers.near(c.mass, one.mass, 1e-9, "mass")
    -- an off-centre compound: the centre of mass is the mass-weighted mean, position stays the origin
    local d = w:body { position = { 0, 0, 0 }, shapes = {
      { type = "box", size = { 1, 1, 1 } },
      { type = "sphere", radius = 0.5, position = { 3, 0, 0 } } } }
    local mb, ms = 1000, 1000 * 4 / 3 * math.pi * 0.125
    near_vec(d.center_of_mass, { 3 * ms / (mb + ms), 0, 0 }, 1e-12, "centre of mass")
    near_vec(d.position, { 0, 0, 0 }, 1e-12, "origin")
    -- I_yy = I_box + I_sphere + sum m d^2 about the centre of mass
    local cx = 3 * ms / (mb + ms)
    local iyy = mb / 6 + mb * cx ^ 2 + 0.4 * ms * 0.25 + ms * (3 - cx) ^ 2
    helpers.near(d.inertia_body[2][2], iyy, 1e-9, "I_yy")
  end)

  it("scale with body.mass, keeping the velocities", function()
    local w = zero_g()
    local b = w:box { size = { 1, 2, 3 }, mass = 2, velocity = { 1, 0, 0 }, angular_velocity = { 0, 0.5, 0 } }
    local I = b.inertia_body[1][1]
    b.mass = 6
    helpers.near(b.mass, 6, 0, "mass")
    helpers.near(b.inertia_body[1][1], 3 * I, 1e-12, "inertia scaled")
    near_vec(b.velocity, { 1, 0, 0 }, 1e-15, "v kept")
    near_vec(b.angular_velocity, { 0, 0.5, 0 }, 1e-15, "omega kept")
    assert.matches("body.mass must be a positive number", err_of(function() b.mass = 0 end))
  end)

  it("can be scaled to a requested mass", function()
    local w = zero_g()
    local b = w:body { mass = 2, shapes = { { type = "box", size = { 1, 1, 1 } }, { type = "sphere", radius = 0.5, position = { 0, 2, 0 } } } }
    helpers.near(b.mass, 2, 1e-12, "mass")
  end)
end)

describe("forces and torques (S3 5.2-5.5)", function()
  local f = 2.5

  it("equal forces at (+-3, 0, -2) give F = (0, 0, 2f) and no torque", function()
    local w = zero_g()
    local b = w:box { size = { 6, 1, 4 }, mass = 4 }
    b:apply_force({ 0, 0, f }, { 3, 0, -2 })
    b:apply_force({ 0, 0, f }, { -3, 0, -2 })
    near_vec(b.force, { 0, 0, 2 * f }, 1e-15, "F")
    near_vec(b.torque, { 0, 0, 0 }, 1e-15, "tau")
    w:step(0.1)
    near_vec(b.momentum, { 0, 0, 2 * f * 0.1 }, 1e-12, "P = F t")
    near_vec(b.angular_momentum, { 0, 0, 0 }, 1e-15, "L")
    near_vec(b.force, { 0, 0, 0 }, 0, "accumulator cleared after the step")
  end)

  it("(0,0,f) at (-3,0,-2) and (0,0,-f) at (3,0,2) give F = 0 and tau = (0, 6f, 0)", function()
    local w = zero_g()
    local b = w:box { size = { 6, 1, 4 }, mass = 4 }
    b:apply_force({ 0, 0, f }, { -3, 0, -2 })
    b:apply_force({ 0, 0, -f }, { 3, 0, 2 })
    near_vec(b.force, { 0, 0, 0 }, 1e-15, "F")
    near_vec(b.torque, { 0, 6 * f, 0 }, 1e-12, "tau")
    w:step(0.1)
    near_vec(b.angular_momentum, { 0, 0.6 * f, 0 }, 1e-12, "L = tau t")
    near_vec(b.momentum, { 0, 0, 0 }, 1e-15, "P")
  end)

  it("move the centre of mass by F/M wherever they act (S3 5.2)", function()
    local w = zero_g()
    local a, b = w:box { size = { 1, 2, 3 }, mass = 2 }, w:box { size = { 1, 2, 3 }, mass = 2, position = { 0, 0, 10 } }
    a:apply_force({ 1, 0, 0 })
    b:apply_force({ 1, 0, 0 }, { 0, 1, 11.5 })
    w:step(0.5)
    helpers.near(a.center_of_mass[1], 0.5 * 0.25 / 2, 1e-12, "x = F t^2 / 2M")
    helpers.near(b.center_of_mass[1], a.center_of_mass[1], 1e-12, "same centre motion off-centre")
    assert.is_true(#b.angular_momentum == 3 and math.abs(b.angular_momentum[2]) > 0.1, "off-centre force spins it")
  end)

  it("gravity is a force Mg at the centre of mass with no torque (S3 5.2): L stays, x falls as g", function()
    local w = impetus.world {}
    local b = w:body { angular_velocity = { 0.3, -0.2, 0.5 }, shapes = {
      { type = "box", size = { 1, 1, 1 } }, { type = "sphere", radius = 0.4, position = { 2, 0.5, 0 } } } }
    local L0, x0 = b.angular_momentum, b.center_of_mass
    for _ = 1, 60 do w:step(1 / 60) end
    near_vec(b.angular_momentum, L0, 1e-12, "L")
    near_vec(b.center_of_mass, { x0[1], x0[2] - G / 2, x0[3] }, 1e-9, "x")
  end)

  it("an off-centre push gives the same v and more kinetic energy, the extra work of a longer path (S3 5.5)", function()
    local function push(at_x)
      local w = zero_g()
      local b = w:box { size = { 6, 1, 1 }, mass = 3 }
      local F, work, dt = { 0, 2, 0 }, 0, 1 / 240
      for _ = 1, 480 do
        local R, x = b.rotation, b.center_of_mass
        local r = { R[1][1] * at_x, R[2][1] * at_x, R[3][1] * at_x } -- the body point (at_x, 0, 0)
        b:apply_force(F, { x[1] + r[1], x[2] + r[2], x[3] + r[3] })
        local tau, w0, v0 = b.torque, b.angular_velocity, b.velocity
        w:step(dt)
        local w1, v1 = b.angular_velocity, b.velocity
        -- power F.v + tau.omega, integrated with the trapezoid rule over the step
        for k = 1, 3 do work = work + dt * (F[k] * (v0[k] + v1[k]) + tau[k] * (w0[k] + w1[k])) / 2 end
      end
      return b, work
    end
    local centre, wc = push(0)
    local off, wo = push(2.5)
    near_vec(off.velocity, centre.velocity, 1e-12, "same linear velocity")
    helpers.near(centre:kinetic_energy(), 0.5 * 3 * (2 * 2 / 3) ^ 2, 1e-9, "1/2 M v^2 through the centre")
    assert.is_true(off:kinetic_energy() > 2 * centre:kinetic_energy(), "the off-centre push spins the block too")
    helpers.near(off:kinetic_energy(), wo, 1e-6 * wo, "kinetic energy = work done")
    helpers.near(centre:kinetic_energy(), wc, 1e-9 * wc, "kinetic energy = work done (centre)")
  end)

  it("impulses change the momenta at once: P += j, L += (p - x) x j", function()
    local w = zero_g()
    local b = w:sphere { radius = 0.5, mass = 2, position = { 1, 1, 1 } }
    b:apply_impulse({ 0, 0, 3 }, { 2, 1, 1 })
    near_vec(b.momentum, { 0, 0, 3 }, 1e-15, "P")
    near_vec(b.angular_momentum, { 0, -3, 0 }, 1e-15, "L")
    near_vec(b.velocity, { 0, 0, 1.5 }, 1e-15, "v")
    helpers.near(b.angular_velocity[2], -3 / (0.4 * 2 * 0.25), 1e-12, "omega = I^-1 L")
  end)

  it("with gravity, bodies fall on the projectile's closed form under every solver", function()
    for _, method in ipairs { "rk4", "midpoint", "adaptive", "euler" } do
      local w = impetus.world { integrator = method }
      local b = w:capsule { radius = 0.2, length = 1, position = { 0, 10, 0 }, velocity = { 1, 2, 3 }, angular_velocity = { 0, 1, 0 } }
      for _ = 1, 60 do w:step(1 / 60) end
      local tol = method == "euler" and 0.1 or 1e-9
      near_vec(b.position, { 1, 10 + 2 - G / 2, 3 }, tol, method .. " position")
      near_vec(b.velocity, { 1, 2 - G, 3 }, 1e-9, method .. " velocity")
    end
  end)
end)

describe("torque-free motion", function()
  local function spin(omega, method, steps)
    local w = impetus.world { gravity = { 0, 0, 0 }, integrator = method or "rk4" }
    local b = w:box { size = { 3, 1, 0.4 }, mass = 2, angular_velocity = omega }
    local L0, E0 = b.angular_momentum, b:kinetic_energy()
    local worst_dev = 0
    for _ = 1, steps or 480 do
      w:step(1 / 240)
      local om = b.angular_velocity
      worst_dev = math.max(worst_dev, math.sqrt((om[1] - omega[1]) ^ 2 + (om[2] - omega[2]) ^ 2 + (om[3] - omega[3]) ^ 2))
    end
    return b, L0, E0, worst_dev
  end

  it("conserves L exactly and the kinetic energy to the solver's accuracy", function()
    local b, L0, E0 = spin({ 1, 2, 3 })
    near_vec(b.angular_momentum, L0, 1e-12, "L")
    helpers.near(b:kinetic_energy(), E0, 1e-6 * E0, "kinetic energy")
  end)

  it("spins steadily about a principal axis, and not about any other", function()
    local _, _, _, dev = spin({ 0, 0, 4 })
    assert.is_true(dev < 1e-9, "principal axis: omega changed by " .. dev)
    local _, _, _, dev2 = spin({ 0.3, 0.2, 4 })
    assert.is_true(dev2 > 0.1, "off-axis: omega should precess, changed only by " .. dev2)
  end)

  it("turns about a principal axis by |omega| t, as the quaternion of that rotation", function()
    local b = spin({ 0, 0, 2 }, "rk4", 240)
    local q, e = b.orientation, quat.from_axis_angle({ 0, 0, 1 }, 2 * 1)
    local s = (q[1] * e[1] + q[2] * e[2] + q[3] * e[3] + q[4] * e[4]) >= 0 and 1 or -1
    for k = 1, 4 do helpers.near(s * q[k], e[k], 1e-9, "q[" .. k .. "]") end
  end)

  it("keeps q a unit quaternion in the state (renormalized) even under Euler", function()
    local b = spin({ 3, -2, 5 }, "euler", 600)
    local q = b.orientation
    helpers.near(q[1] ^ 2 + q[2] ^ 2 + q[3] ^ 2 + q[4] ^ 2, 1, 1e-14, "|q|^2")
  end)
end)

describe("damping (body.linear_damping, body.angular_damping)", function()
  it("makes a free body's momentum and angular momentum decay as exp(-c t), however it tumbles", function()
    local w = impetus.world { gravity = { 0, 0, 0 }, integrator = "rk4" }
    local b = w:box { size = { 3, 1, 0.4 }, mass = 2, velocity = { 3, -1, 2 }, angular_velocity = { 1, 2, 3 },
      linear_damping = 0.5, angular_damping = 0.8 }
    local P0, L0 = b.momentum, b.angular_momentum
    for _ = 1, 480 do w:step(1 / 240) end -- 2 s
    local P1, L1 = b.momentum, b.angular_momentum
    for k = 1, 3 do
      helpers.near(P1[k], P0[k] * math.exp(-0.5 * 2), 1e-9 * math.abs(P0[k]), "P[" .. k .. "]")
      helpers.near(L1[k], L0[k] * math.exp(-0.8 * 2), 1e-9 * math.sqrt(L0[1] ^ 2 + L0[2] ^ 2 + L0[3] ^ 2), "L[" .. k .. "]")
    end
  end)

  it("is stable for any c h under every explicit solver (exp(-c h) a step, not a force in the derivative)", function()
    for _, method in ipairs { "euler", "midpoint", "rk4" } do
      local w = impetus.world { gravity = { 0, 0, 0 }, integrator = method }
      local b = w:box { size = { 1, 1, 1 }, velocity = { 2, 0, 0 }, angular_velocity = { 0, 0, 3 }, linear_damping = 1000,
        angular_damping = 200 }
      for _ = 1, 5 do w:step(1 / 60) end
      helpers.near(b.velocity[1], 2 * math.exp(-1000 * 5 / 60), 1e-30, method .. " v")
      helpers.near(b.angular_velocity[3], 3 * math.exp(-200 * 5 / 60), 1e-9 * 3 * math.exp(-200 * 5 / 60), method .. " omega")
    end
  end)

  it("slows a jointed pendulum's swing: its energy falls", function()
    local w = impetus.world {}
    w.sleeping = false
    local bob = w:box { size = { 0.2, 0.2, 0.2 }, position = { 1, 2, 0 }, angular_damping = 1, linear_damping = 0.5 }
    local j = w:joint { type = "hinge", a = bob, anchor = { 0, 2, 0 }, axis = { 0, 0, 1 } }
    local function energy() return bob:kinetic_energy() + bob.mass * 9.81 * bob.position[2] end
    local e0, last = energy(), energy()
    for _ = 1, 300 do
      w:step(1 / 60)
      local e = energy()
      -- at the turns of the swing the damping takes almost nothing and the step's own energy error
      -- shows (kick, drift, kick: at most 1.7e-7 of E0, measured; the undamped swing keeps E0 to 5e-5)
      assert(e <= last + 1e-6 * e0, "energy rose " .. last .. " -> " .. e)
      last = e
    end
    assert(j.gap < 1e-6, "gap " .. j.gap)
    -- after 5 s of damping the swing is nearly gone: the bob hangs within a few cm of the bottom (y = 1)
    assert(bob.position[2] < 1.05 and e0 - last > 0.9 * bob.mass * 9.81 * 1, "still swinging: y " .. bob.position[2])
  end)

  it("in the impulse stage (a body in contact) decays as exp(-c t) too: a box spinning on frictionless ground", function()
    local w = impetus.world {}
    w.sleeping = false
    w:box { size = { 10, 1, 10 }, position = { 0, -0.5, 0 }, static = true, friction = 0 }
    local b = w:box { size = { 1, 1, 1 }, position = { 0, 0.5, 0 }, angular_velocity = { 0, 4, 0 }, friction = 0, angular_damping = 2 }
    for _ = 1, 10 do w:step(1 / 60) end -- touching from the first step
    local om0 = b.angular_velocity[2]
    for _ = 1, 60 do w:step(1 / 60) end
    helpers.near(b.angular_velocity[2], om0 * math.exp(-2 * 60 / 60), 1e-9 * om0, "omega after 60 steps")
  end)

  it("is read and set, and refused outside 0 .. 1e6 with the field's name", function()
    local w = impetus.world {}
    local b = w:sphere { linear_damping = 0.25 }
    assert.are.equal(0.25, b.linear_damping)
    assert.are.equal(0, b.angular_damping)
    b.angular_damping = 3
    assert.are.equal(3, b.angular_damping)
    assert.matches("world:sphere: field 'linear_damping' must be a number in 0", err_of(function() w:sphere { linear_damping = -1 } end))
    assert.matches("field 'angular_damping'", err_of(function() w:box { angular_damping = 0 / 0 } end))
    assert.matches("body.linear_damping must be a number in 0", err_of(function() b.linear_damping = 1e7 end))
    assert.matches("body.angular_damping", err_of(function() b.angular_damping = -0.5 end))
    assert.matches("number expected", err_of(function() b.angular_damping = "x" end))
    assert.are.equal(0.25, b.linear_damping) -- nothing changed
    assert.are.equal(3, b.angular_damping)
  end)
end)

describe("quaternions", function()
  it("round-trip through rotation matrices (q and -q are the same rotation)", function()
    math.randomseed(3)
    for _ = 1, 200 do
      local axis = { math.random() - 0.5, math.random() - 0.5, math.random() - 0.5 }
      local q = quat.from_axis_angle(axis, (math.random() * 2 - 1) * 2 * math.pi)
      local back = quat.from_matrix(quat.to_matrix(q))
      local s = (q[1] * back[1] + q[2] * back[2] + q[3] * back[3] + q[4] * back[4]) >= 0 and 1 or -1
      for k = 1, 4 do helpers.near(s * back[k], q[k], 1e-12, "q[" .. k .. "]") end
    end
  end)

  it("compose like their matrices and rotate vectors like them", function()
    local a, b = quat.from_axis_angle({ 1, 0, 0 }, 0.5), quat.from_axis_angle({ 0, 1, 1 }, 1.2)
    local ab, Ra, Rb = quat.to_matrix(quat.mul(a, b)), quat.to_matrix(a), quat.to_matrix(b)
    for i = 1, 3 do
      for j = 1, 3 do
        local s = 0
        for k = 1, 3 do s = s + Ra[i][k] * Rb[k][j] end
        helpers.near(ab[i][j], s, 1e-14, "R(ab)")
      end
    end
    near_vec(quat.rotate(quat.from_axis_angle({ 0, 0, 1 }, math.pi / 2), { 1, 0, 0 }), { 0, 1, 0 }, 1e-15, "rotate")
    local id = quat.mul(a, quat.conjugate(a))
    helpers.near(id[1], 1, 1e-15, "q q* = 1")
  end)

  it("are read and written as body.orientation", function()
    local w = zero_g()
    local b = w:body { position = { 1, 0, 0 }, shapes = { { type = "sphere", radius = 0.5, position = { 1, 0, 0 } } } }
    b.orientation = quat.from_axis_angle({ 0, 0, 1 }, math.pi / 2)
    near_vec(b.position, { 1, 0, 0 }, 1e-15, "the origin stays")
    near_vec(b.center_of_mass, { 1, 1, 0 }, 1e-12, "the centre of mass turns about it")
  end)
end)

describe("the body state vector", function()
  it("is [x q P L] per body, 13 numbers, read and written as one flat list", function()
    local w = zero_g()
    local a = w:box { size = { 1, 2, 3 }, position = { 1, 2, 3 }, velocity = { 1, 0, 0 }, mass = 2 }
    local b = w:sphere { radius = 0.5, position = { -1, 0, 0 }, angular_velocity = { 0, 3, 0 }, mass = 1 }
    local x = w:body_state()
    assert.are.equal(26, #x)
    near_vec({ x[1], x[2], x[3] }, { 1, 2, 3 }, 0, "x of a")
    near_vec({ x[8], x[9], x[10] }, { 2, 0, 0 }, 1e-15, "P of a")
    near_vec({ x[24], x[25], x[26] }, { 0, 3 * 0.4 * 0.25, 0 }, 1e-15, "L of b")
    -- write a state with an unnormalized q: it is renormalized in the state itself
    x[4], x[5], x[6], x[7] = 2, 0, 0, 2
    x[1] = 5
    w:set_body_state(x)
    local q = a.orientation
    helpers.near(q[1], math.sqrt(0.5), 1e-15, "q renormalized")
    helpers.near(q[4], math.sqrt(0.5), 1e-15, "q renormalized")
    helpers.near(a.center_of_mass[1], 5, 0, "x written")
    local y = w:body_state()
    helpers.near(y[4] ^ 2 + y[5] ^ 2 + y[6] ^ 2 + y[7] ^ 2, 1, 1e-15, "|q| in the state")
    assert.matches("must hold 26 numbers", err_of(function() w:set_body_state { 1, 2 } end))
    assert.are.equal(b, w:bodies()[2])
  end)
end)

describe("static and kinematic bodies", function()
  it("static bodies never move, whatever pushes them", function()
    local w = impetus.world {}
    local s = w:box { static = true, size = { 1, 1, 1 }, position = { 0, 1, 0 } }
    assert.are.equal("impetus.Collider", getmetatable(s).__name) -- static = true keeps the particle collider
    local b = w:body { static = true, position = { 0, 2, 0 }, shapes = { { type = "box", size = { 1, 1, 1 } } } }
    b:apply_force({ 100, 0, 0 }, { 0, 3, 0 })
    b:apply_impulse({ 1, 1, 1 })
    for _ = 1, 10 do w:step(1 / 60) end
    near_vec(b.position, { 0, 2, 0 }, 0, "position")
    near_vec(b.velocity, { 0, 0, 0 }, 0, "velocity")
    assert.is_true(b.static)
    assert.are.equal(0, b.mass)
  end)

  it("kinematic bodies follow their velocities and ignore gravity and forces", function()
    local w = impetus.world {}
    local k = w:box { kinematic = true, size = { 1, 1, 1 }, velocity = { 1, 0, 0 }, angular_velocity = { 0, 1, 0 } }
    k:apply_force({ 0, 100, 0 })
    for _ = 1, 60 do w:step(1 / 60) end
    near_vec(k.position, { 1, 0, 0 }, 1e-12, "x = v t")
    local q, e = k.orientation, quat.from_axis_angle({ 0, 1, 0 }, 1)
    for i = 1, 4 do helpers.near(q[i], e[i], 1e-9, "q") end
    near_vec(k.velocity, { 1, 0, 0 }, 0, "v")
    k.kinematic = false
    near_vec(k.velocity, { 1, 0, 0 }, 1e-12, "becoming dynamic keeps the velocity")
    w:step(1 / 60)
    assert.is_true(k.velocity[2] < 0, "and then it falls")
  end)

  it("move_to brings a kinematic body to a target at the end of the next step", function()
    local w = impetus.world {}
    local k = w:capsule { kinematic = true, position = { 1, 2, 3 } }
    k:move_to({ 2, 2, 1 }, 0.1)
    w:step(0.1)
    near_vec(k.position, { 2, 2, 1 }, 1e-12, "reached")
    assert.matches("must be kinematic", err_of(function() w:sphere {}:move_to({ 0, 0, 0 }, 0.1) end))
  end)

  it("join the world's energy: gravity potential and kinetic energy of a falling body are conserved", function()
    local w = impetus.world {}
    local b = w:box { size = { 1, 2, 3 }, position = { 0, 5, 0 }, velocity = { 1, 0, 0 }, angular_velocity = { 0.5, 0.2, 0 } }
    local e0 = w:energy()
    for _ = 1, 60 do w:step(1 / 60) end
    helpers.near(w:energy(), e0, 1e-6 * math.abs(e0), "energy")
    assert.is_true(b:kinetic_energy() > 0)
  end)
end)

describe("body errors", function()
  it("name the function and the field", function()
    local w = impetus.world {}
    assert.matches("world:sphere: field 'radius' must be > 0", err_of(function() w:sphere { radius = -1 } end))
    assert.matches("world:box: unknown field 'colour'", err_of(function() w:box { colour = { 1, 0, 0 } } end))
    assert.matches("world:hull: hull: the hull's points are all in one plane",
      err_of(function() w:hull { points = { { 0, 0, 0 }, { 1, 0, 0 }, { 0, 1, 0 }, { 1, 1, 0 } } } end))
    assert.matches("at least 4 points", err_of(function() w:hull { points = { { 0, 0, 0 } } } end))
    assert.matches("shapes%[1%]: field 'type'", err_of(function() w:body { shapes = { { type = "cone" } } } end))
    assert.matches("static bodies only", err_of(function() w:body { shapes = { { type = "plane" } } } end))
    assert.matches("orientation", err_of(function() w:box { orientation = { 0, 0, 0, 0 } } end))
    assert.matches("world:capsule: a body cannot be both static and kinematic", err_of(function() w:capsule { static = true, kinematic = true } end))
    assert.matches("world:mesh: mesh triangle 1 refers to vertex 5",
      err_of(function() w:mesh { vertices = { { 0, 0, 0 }, { 1, 0, 0 }, { 0, 0, 1 } }, triangles = { { 1, 2, 5 } } } end))
    assert.matches("group", err_of(function() w:sphere { group = -1 } end))
    assert.matches("world:sphere: field 'radius' must be in 0.0001 .. 1e%+06 m", err_of(function() w:sphere { radius = 1e300 } end))
    assert.matches("body:apply_force: argument 'force'", err_of(function() w:sphere {}:apply_force(5) end))
  end)

  it("refuse changes from inside the world's step", function()
    local w = impetus.world {}
    local b = w:sphere {}
    w:particle {}
    w:field(function() b:apply_force({ 1, 0, 0 }); return 0, 0, 0 end)
    assert.matches("body:apply_force: the world is locked", err_of(function() w:step(1 / 60) end))
    near_vec(b.position, { 0, 0, 0 }, 0, "the step was undone")
  end)

  it("never crash on junk arguments (every failure is a Lua error)", function()
    local w = impetus.world {}
    local junk = { 0, -1, 1e300, "x", {}, { 1, 2 }, { "a", "b", "c" }, true, function() end, { 0, 0, 0, 0 }, { { 0, 0, 0 } } }
    local fields = { "radius", "size", "half", "length", "points", "position", "orientation", "velocity", "mass",
      "density", "group", "mask", "vertices", "triangles", "shapes", "axis", "angle", "static", "kinematic", "color" }
    math.randomseed(13)
    local made = 0
    for _ = 1, 600 do
      local def = {}
      for _ = 1, math.random(0, 3) do def[fields[math.random(#fields)]] = junk[math.random(#junk)] end
      local ctor = ({ "sphere", "box", "capsule", "hull", "mesh", "body" })[math.random(6)]
      local ok, b = pcall(w[ctor], w, def)
      if ok then made = made + 1 end
      assert.is_true(ok or type(b) == "string", ctor)
    end
    for _, q in ipairs { w.raycast, w.query_point, w.overlap } do
      for _ = 1, 50 do pcall(q, w, junk[math.random(#junk)], junk[math.random(#junk)], junk[math.random(#junk)]) end
    end
    assert.is_true(made > 10, "some junk is valid")
    for _ = 1, 5 do w:step(1 / 60) end
    w:contacts()
  end)

  it("detect stale handles", function()
    local w = impetus.world {}
    local b = w:sphere {}
    b:destroy()
    assert.is_false(b:valid())
    assert.matches("stale Body handle", err_of(function() return b.position end))
    b:destroy() -- twice is harmless
  end)

  it("catch NaN in a body and put it back", function()
    local w = impetus.world { gravity = { 0, 0, 0 } }
    local b = w:box { size = { 1, 2, 3 }, position = { 0, 1, 0 } }
    local ok, msg
    for _ = 1, 4 do
      b:apply_torque({ 1e300, -1e300, 1e300 })
      b:apply_force({ 1e300, 1e300, 0 })
      ok, msg = w:step(1)
      if not ok then break end
    end
    assert.is_false(ok)
    assert.matches("NaN guard: 1 body went non%-finite", msg)
    for k = 1, 3 do assert.is_true(b.position[k] == b.position[k] and math.abs(b.position[k]) < math.huge) end
  end)
end)
