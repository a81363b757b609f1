-- Constrained dynamics (S3 "Constrained dynamics", Witkin): Lagrange-multiplier constraints on
-- particles (eq. 11), their built-in kinds, script constraints, and particles on curves (S3 5).
local impetus = require "impetus"
local helpers = require "helpers"

local G = 9.81

local function len(a) return math.sqrt(a[1] ^ 2 + a[2] ^ 2 + a[3] ^ 2) end
local function sub(a, b) return { a[1] - b[1], a[2] - b[2], a[3] - b[3] } end
local function dot(a, b) return a[1] * b[1] + a[2] * b[2] + a[3] * b[3] end

local function err_of(fn, ...)
  local ok, err = pcall(fn, ...)
  assert.is_false(ok, "expected an error")
  return tostring(err)
end

-- a bead of mass m on the circle of radius R about the origin in the xy plane, at angle th from the bottom
local function bead_world(opts)
  opts = opts or {}
  local w = impetus.world { integrator = opts.integrator or "rk4", gravity = opts.gravity }
  if opts.ks then w.constraint_ks, w.constraint_kd = opts.ks, opts.kd end
  local R, th = opts.R or 1, opts.th or math.pi / 2
  local b = w:particle { position = { R * math.sin(th), -R * math.cos(th), 0 }, velocity = opts.velocity, mass = opts.mass }
  local wire = w:wire(b, { center = { 0, 0, 0 }, radius = R })
  return w, b, wire
end

-- the largest |r - R| of the bead over T seconds, and the largest energy error
local function bead_run(w, b, R, dt, T)
  local worst, e0, de = 0, w:energy(), 0
  for _ = 1, math.floor(T / dt + 0.5) do
    w:step(dt)
    worst = math.max(worst, math.abs(len(b.position) - R))
    de = math.max(de, math.abs(w:energy() - e0))
  end
  return worst, de
end

describe("a bead on a wire (S3 section 2)", function()
  it("drifts off the circle without feedback, and the feedback term holds it on", function()
    local w0, b0 = bead_world { ks = 0, kd = 0 }
    local free = bead_run(w0, b0, 1, 1 / 60, 10)
    local w1, b1 = bead_world()
    local held = bead_run(w1, b1, 1, 1 / 60, 10)
    -- RK4 at 60 Hz on a bead swinging at up to 4.4 m/s: the radius drifts by ~3e-4 without feedback
    assert.is_true(free > 1e-4 and free < 1e-3, "drift without feedback " .. free)
    assert.is_true(held < 1e-5, "drift with feedback " .. held)
    assert.is_true(held < free / 30, "feedback should cut the drift by far more than 30x")
    -- a plane row keeps the 3D wire's bead in the wire's plane
    assert.are.equal(0, b1.position[3])
  end)

  it("conserves energy within 2e-4 J over 10 s with RK4 (m g R = 9.81 J)", function()
    local w, b = bead_world()
    local _, de = bead_run(w, b, 1, 1 / 60, 10)
    assert.is_true(de < 2e-4, "energy error " .. de)
    local w2, b2 = bead_world()
    local _, de2 = bead_run(w2, b2, 1, 1 / 240, 10)
    assert.is_true(de2 < 1e-6, "energy error at 240 Hz " .. de2)
  end)

  it("at rest feels the constraint force that projects gravity onto the tangent (S3 eq. 8)", function()
    local m, R, th = 2, 1.5, 0.6
    local w, b, wire = bead_world { mass = m, R = R, th = th }
    w:solve_constraints()
    local x = b.position
    local f = { 0, -m * G, 0 }
    local fc = wire.force
    local s = -dot(f, x) / dot(x, x) -- f^ = -(f . x)/(x . x) x
    for k = 1, 3 do helpers.near(fc[k], s * x[k], 1e-9, "constraint force " .. k) end
    -- what is left of gravity is tangent to the circle
    helpers.near(dot({ f[1] + fc[1], f[2] + fc[2], f[3] + fc[3] }, x), 0, 1e-9, "net force along the radius")
    local lambda = wire.lambda
    helpers.near(lambda[1], 0, 1e-12, "plane row's multiplier")
  end)

  it("moving with speed s and no applied force feels the centripetal force m s^2 / R", function()
    local m, R, s = 0.5, 2, 3
    local w, b, wire = bead_world { gravity = { 0, 0, 0 }, mass = m, R = R, th = math.pi / 2, velocity = { 0, s, 0 } }
    w:solve_constraints()
    local fc = wire.force
    helpers.near(fc[1], -m * s * s / R, 1e-9, "radial force")
    helpers.near(fc[2], 0, 1e-12, "tangential force")
    -- and it keeps the speed: after a quarter turn the bead is at the top of its circle, speed s
    for _ = 1, 100 do w:step(math.pi * R / (2 * s) / 100) end
    helpers.near(b.position[2], R, 1e-6, "quarter turn")
    helpers.near(len(b.velocity), s, 1e-6, "speed")
  end)
end)

-- the period of a pendulum by its upward zero crossings, interpolated
local function period(world, bob, dt)
  local crossings, lastx, t = {}, bob.position[1], 0
  while #crossings < 4 do
    world:step(dt)
    t = t + dt
    local x = bob.position[1]
    if lastx < 0 and x >= 0 then crossings[#crossings + 1] = t - dt * x / (x - lastx) end
    lastx = x
  end
  return (crossings[4] - crossings[1]) / 3
end

describe("rods", function()
  it("make a pendulum whose small-angle period is 2 pi sqrt(L / g) within 0.5%", function()
    local L, th = 1.5, 0.05
    local w = impetus.world()
    local pivot = w:particle { position = { 0, 0, 0 }, fixed = true }
    local bob = w:particle { position = { L * math.sin(th), -L * math.cos(th), 0 } }
    w:rod(pivot, bob)
    local T, T0 = period(w, bob, 1 / 240), 2 * math.pi * math.sqrt(L / G)
    assert.is_true(math.abs(T - T0) / T0 < 0.005, "period " .. T .. " vs " .. T0)
    -- closer: the finite-amplitude correction T0 (1 + th^2 / 16) within 1e-5
    helpers.near(T, T0 * (1 + th * th / 16), 1e-5 * T0, "period with the amplitude correction")
  end)

  it("hold a hanging pendulum with the tension m g, and the pivot feels it", function()
    local w = impetus.world()
    local pivot = w:particle { position = { 0, 2, 0 }, fixed = true }
    local bob = w:particle { position = { 0, 0.5, 0 }, mass = 3 }
    local rod = w:rod(pivot, bob)
    helpers.near(rod.length, 1.5, 1e-15, "length from the distance")
    w:solve_constraints()
    local f = rod.forces
    helpers.near(f[2][2], 3 * G, 1e-9, "upward force on the bob")
    helpers.near(f[1][2], -3 * G, 1e-9, "downward force on the pivot")
  end)

  it("conserve a double pendulum's energy with RK4 (chaotic, from horizontal)", function()
    local w = impetus.world()
    local a = w:particle { position = { 0, 0, 0 }, fixed = true }
    local b = w:particle { position = { 1, 0, 0 } }
    local c = w:particle { position = { 2, 0, 0 } }
    w:rod(a, b)
    w:rod(b, c)
    local e0, de, dc = w:energy(), 0, 0
    for _ = 1, 1200 do
      w:step(1 / 240)
      de = math.max(de, math.abs(w:energy() - e0))
      dc = math.max(dc, w:constraint_error())
    end
    assert.is_true(de < 1e-5, "energy error " .. de .. " J (m g L = 9.81 J)")
    assert.is_true(dc < 1e-6, "rod length error " .. dc)
    assert.is_true(c.position[2] < 0, "the pendulum moved")
  end)

  it("keep a 50-link chain's lengths within 1e-6 of the rod length, IC(0) solving it in one iteration", function()
    local w = impetus.world()
    local prev = w:particle { position = { 0, 0, 0 }, fixed = true }
    for i = 1, 50 do
      local p = w:particle { position = { 0.04 * i, 0, 0 }, mass = 0.02 }
      w:rod(prev, p)
      prev = p
    end
    local worst = 0
    for _ = 1, 240 do
      w:step(1 / 480)
      worst = math.max(worst, w:constraint_error())
    end
    assert.is_true(worst < 0.04 * 1e-6, "largest |C| " .. worst)
    local prof = w:profile()
    assert.are.equal(4, prof.cg_solves)
    assert.is_true(prof.cg_max_iterations <= 2, "CG iterations " .. prof.cg_max_iterations)
  end)

  it("carry a loaded two-bar truss with the member forces of statics, m g L / (2 h) in compression", function()
    local m, h = 5, 0.75
    local w = impetus.world()
    local left = w:particle { position = { -1, 0, 0 }, fixed = true }
    local right = w:particle { position = { 1, 0, 0 }, fixed = true }
    local apex = w:particle { position = { 0, h, 0 }, mass = m }
    local a, b = w:rod(apex, left), w:rod(apex, right)
    for _ = 1, 30 do w:step(1 / 60) end
    w:solve_constraints()
    local L = math.sqrt(1 + h * h)
    -- lambda > 0: the rod pushes its ends apart; on the apex that is lambda (x_apex - x_support) / L
    helpers.near(a.lambda, m * G * L / (2 * h), 1e-9, "left bar")
    helpers.near(b.lambda, m * G * L / (2 * h), 1e-9, "right bar")
    local f = a.force
    helpers.near(f[2], m * G / 2, 1e-9, "each bar holds half the weight")
    helpers.near(apex.position[2], h, 1e-12, "the apex does not sag")
  end)

  it("work with every integrator, the adaptive one included", function()
    for _, method in ipairs({ "euler", "midpoint", "rk4", "adaptive" }) do
      local w = impetus.world { integrator = method }
      local pivot = w:particle { position = { 0, 0, 0 }, fixed = true }
      local bob = w:particle { position = { 1, 0, 0 } }
      w:rod(pivot, bob)
      local cp = w:curve_particle { curve = function(u) return { 2 + math.sin(u), -math.cos(u), 0 } end, u = math.pi / 2 }
      local worst = 0
      for _ = 1, 240 do
        assert.is_true(w:step(1 / 240))
        worst = math.max(worst, math.abs(len(bob.position) - 1))
      end
      local bound = method == "euler" and 0.02 or 1e-4
      assert.is_true(worst < bound, method .. ": length error " .. worst)
      -- the rod pendulum and the curve pendulum swing together
      helpers.near(cp.position[1] - 2, bob.position[1], method == "euler" and 0.05 or 1e-4, method .. " x")
    end
  end)

  it("give the same motion with every preconditioner", function()
    local function truss(precond)
      local w = impetus.world()
      w.constraint_preconditioner = precond
      local p = {}
      for i = 0, 3 do
        p[#p + 1] = w:particle { position = { i, 0, 0 }, fixed = (i == 0 or i == 3) }
        p[#p + 1] = w:particle { position = { i + 0.5, 0.8, 0 } }
      end
      for i = 1, #p - 1 do w:rod(p[i], p[i + 1]) end
      for i = 1, #p - 2 do w:rod(p[i], p[i + 2]) end
      for _ = 1, 60 do w:step(1 / 120) end
      return p[4].position, w:profile()
    end
    local a = truss("ic")
    local b = truss("jacobi")
    local c = truss("none")
    for k = 1, 3 do
      helpers.near(b[k], a[k], 1e-9, "jacobi")
      helpers.near(c[k], a[k], 1e-9, "none")
    end
  end)

  it("follow a kinematic particle (its velocity enters Cdot and Jdot qdot)", function()
    local w = impetus.world()
    local hand = w:particle { position = { 0, 0, 0 }, kinematic = true, velocity = { 1, 0.5, 0 } }
    local bob = w:particle { position = { 0, -1, 0 }, velocity = { 1, 0.5, 0 } } -- a legal start: Cdot = 0
    w:rod(hand, bob)
    local worst = 0
    for _ = 1, 240 do
      w:step(1 / 240)
      worst = math.max(worst, math.abs(len(sub(bob.position, hand.position)) - 1))
    end
    assert.is_true(worst < 1e-6, "length error " .. worst)
    helpers.near(hand.position[1], 1, 1e-12, "the hand moved on its own")
  end)
end)

describe("constraints and colliders", function()
  -- a chain of 40 rods dropped across a sphere onto the floor. Collisions act particle by particle;
  -- without the projection after them the impacts crush rods and the chain explodes
  local function drape(friction)
    local w = impetus.world()
    w:plane { restitution = 0.3, friction = friction }
    w:sphere { static = true, position = { 0, 1, 0 }, radius = 0.8, restitution = 0.3, friction = friction }
    local prev
    for i = 0, 40 do
      local p = w:particle { position = { -2 + 0.1 * i, 2.5, 0.05 * math.sin(i) }, radius = 0.04, mass = 0.05 }
      if prev then w:rod(prev, p) end
      prev = p
    end
    local during = 0
    for _ = 1, 720 do
      assert.is_true(w:step(1 / 240))
      during = math.max(during, w:constraint_error())
    end
    for _ = 1, 240 do w:step(1 / 240) end
    return during, w:constraint_error(), w:kinetic_energy()
  end

  it("keep a chain dropped across a sphere onto the floor whole, and let it come to rest", function()
    for _, mu in ipairs({ 0.4, 0 }) do
      local during, after, ke = drape(mu)
      assert.is_true(during < 5e-4, "friction " .. mu .. ": largest |C| during impacts " .. during)
      assert.is_true(after < 1e-6, "friction " .. mu .. ": |C| at rest " .. after)
      if mu > 0 then assert.is_true(ke < 1e-3, "at rest: kinetic energy " .. ke) end
    end
  end)

  it("keep a hanging chain's rods when it piles onto the floor", function()
    local w = impetus.world()
    w:plane { restitution = 0.2, friction = 0.5 }
    local prev = w:particle { position = { 0, 0.5, 0 }, fixed = true, radius = 0.05 }
    for i = 1, 30 do
      local p = w:particle { position = { 0.1 * i, 0.5, 0 }, radius = 0.05, mass = 0.1 }
      w:rod(prev, p)
      prev = p
    end
    local worst = 0
    for _ = 1, 720 do
      w:step(1 / 240)
      worst = math.max(worst, w:constraint_error())
    end
    assert.is_true(worst < 2e-5, "largest |C| " .. worst)
    assert.is_true(w.contact_count > 15, "lying on the floor: " .. w.contact_count .. " contacts")
  end)
end)

describe("pins, planes and lines", function()
  it("a pin holds a particle at its point; moving the point moves the particle", function()
    local w = impetus.world()
    local p = w:particle { position = { 1, 2, 3 } }
    local pin = w:pin(p)
    for _ = 1, 60 do w:step(1 / 60) end
    for k, v in ipairs({ 1, 2, 3 }) do helpers.near(p.position[k], v, 1e-9, "pinned") end
    w:solve_constraints()
    local l = pin.lambda
    helpers.near(l[2], G, 1e-9, "the pin carries the weight")
    pin.point = { 1, 2.1, 3 }
    for _ = 1, 120 do w:step(1 / 60) end
    helpers.near(p.position[2], 2.1, 1e-3, "followed the pin (feedback)")
  end)

  it("a bead on an inclined line slides with acceleration g sin(theta)", function()
    local th = math.rad(30)
    local w = impetus.world()
    local p = w:particle { position = { 0, 0, 0 } }
    w:on_line(p, { direction = { math.cos(th), -math.sin(th), 0 } })
    for _ = 1, 120 do w:step(1 / 60) end
    local s = 0.5 * G * math.sin(th) * 4
    helpers.near(p.position[1], s * math.cos(th), 1e-9, "x")
    helpers.near(p.position[2], -s * math.sin(th), 1e-9, "y")
    helpers.near(p.position[3], 0, 1e-12, "z")
  end)

  it("a particle on a plane moves freely in it and not off it", function()
    local w = impetus.world()
    local p = w:particle { position = { 0, 1, 0 }, velocity = { 1, 0, 2 } }
    w:on_plane(p, { normal = { 0, 1, 0 } })
    for _ = 1, 60 do w:step(1 / 60) end
    helpers.near(p.position[1], 1, 1e-9, "x")
    helpers.near(p.position[2], 1, 1e-9, "y")
    helpers.near(p.position[3], 2, 1e-9, "z")
  end)
end)

describe("script constraints", function()
  local function circle_run(kind)
    local w = impetus.world()
    local b = w:particle { position = { 0.6, -0.8, 0 }, velocity = { 1, 0.75, 0 } }
    if kind == "wire" then
      w:wire(b, { center = { 0, 0, 0 }, radius = 1 })
    elseif kind == "gradient" then
      w:constraint { particles = { b }, C = function(x)
        return (dot(x, x) - 1) / 2, { x[1], x[2], x[3] }
      end }
    else
      w:constraint { particles = { b }, C = function(x) return (dot(x, x) - 1) / 2 end }
    end
    for _ = 1, 240 do w:step(1 / 120) end
    return b.position, b.velocity
  end

  it("a Lua circle C = (x.x - 1)/2 matches the built-in wire, with or without gradients", function()
    local x0, v0 = circle_run("wire")
    local x1, v1 = circle_run("gradient")
    local x2, v2 = circle_run("numeric")
    for k = 1, 3 do
      helpers.near(x1[k], x0[k], 1e-9, "with gradients, x")
      helpers.near(v1[k], v0[k], 1e-9, "with gradients, v")
      helpers.near(x2[k], x0[k], 1e-6, "numeric, x")
      helpers.near(v2[k], v0[k], 1e-6, "numeric, v")
    end
  end)

  it("can invent a wire: a bead on the parabola y = x^2 conserves energy", function()
    local w = impetus.world()
    local b = w:particle { position = { 1, 1, 0 } }
    w:on_plane(b, { normal = { 0, 0, 1 } })
    w:constraint { particles = { b }, C = function(x) return x[2] - x[1] * x[1] end }
    local e0, de, dc, xmin = w:energy(), 0, 0, 1
    for _ = 1, 600 do
      w:step(1 / 240)
      de = math.max(de, math.abs(w:energy() - e0))
      local x = b.position
      dc = math.max(dc, math.abs(x[2] - x[1] ^ 2))
      xmin = math.min(xmin, x[1])
    end
    assert.is_true(de < 1e-5, "energy error " .. de)
    assert.is_true(dc < 1e-6, "off the parabola by " .. dc)
    helpers.near(xmin, -1, 1e-3, "slid through the bottom and up the other side to x = -1")
  end)

  it("a two-particle Lua distance constraint acts like a rod", function()
    local function run(lua)
      local w = impetus.world()
      local a = w:particle { position = { 0, 0, 0 }, fixed = true }
      local b = w:particle { position = { 1, 0, 0 }, velocity = { 0, 0, 1 } }
      if lua then
        w:constraint { particles = { a, b }, C = function(xa, xb) -- C = |d| - 1, the rod's own form
          local d = sub(xa, xb)
          local l = len(d)
          local n = { d[1] / l, d[2] / l, d[3] / l }
          return l - 1, n, { -n[1], -n[2], -n[3] }
        end }
      else
        w:rod(a, b)
      end
      for _ = 1, 120 do w:step(1 / 120) end
      return b.position
    end
    local x0, x1 = run(false), run(true)
    -- (the script's Jdot comes from central differences of its gradients: ~1e-8 relative)
    for k = 1, 3 do helpers.near(x1[k], x0[k], 1e-7, "position") end
  end)

  it("report script errors with a traceback and leave the world as it was", function()
    local w = impetus.world()
    local b = w:particle { position = { 1, 0, 0 } }
    local calls, bad = 0, false
    w:constraint { particles = { b }, C = function(x)
      calls = calls + 1
      if bad then error("broken wire") end
      return (dot(x, x) - 1) / 2, x
    end }
    w:step(1 / 60)
    local before = b.position
    bad = true
    local e = err_of(function() w:step(1 / 60) end)
    assert.matches("broken wire", e)
    assert.matches("step was undone", e)
    assert.are.same(before, b.position)
    bad = false
    assert.is_true(w:step(1 / 60))
    assert.is_true(calls > 0)
    local w2 = impetus.world()
    local q = w2:particle {}
    w2:constraint { particles = { q }, C = function() return 0 / 0 end }
    assert.matches("finite number C", err_of(function() w2:step(1 / 60) end))
    local w3 = impetus.world()
    local r = w3:particle {}
    w3:constraint { particles = { r }, C = function() return 1, "not a vector" end }
    assert.matches("gradient vectors", err_of(function() w3:step(1 / 60) end))
  end)

  it("cannot change the world from inside a step", function()
    local w = impetus.world()
    local b = w:particle { position = { 1, 0, 0 } }
    local c = w:particle { position = { 2, 0, 0 } }
    local what = "particle"
    w:constraint { particles = { b }, C = function(x)
      if what == "particle" then w:particle {} elseif what == "rod" then w:rod(b, c)
      elseif what == "ks" then w.constraint_ks = 1 else w:solve_constraints() end
      return 0
    end }
    for _, thing in ipairs({ "particle", "rod", "ks", "solve" }) do
      what = thing
      assert.matches("locked", err_of(function() w:step(1 / 60) end))
    end
    assert.are.equal(2, w.particle_count)
    assert.are.equal(1, w.constraint_count)
  end)
end)

describe("degenerate systems", function()
  local function pendulum(extra)
    local w = impetus.world()
    local pivot = w:particle { position = { 0, 0, 0 }, fixed = true }
    local bob = w:particle { position = { 1, 0, 0 } }
    local rod = w:rod(pivot, bob)
    local more = extra and extra(w, pivot, bob) or {}
    for _ = 1, 120 do assert.is_true(w:step(1 / 120)) end
    return bob.position, rod, more, w
  end

  it("ignore constraints that only fixed particles feel", function()
    local x0 = pendulum()
    local x1 = pendulum(function(w, pivot)
      local anchor = w:particle { position = { 3, 0, 0 }, fixed = true }
      w:pin(pivot, { 0, 0.5, 0 }) -- violated, but nothing can move: lambda stays 0
      w:rod(pivot, anchor, { length = 2 })
      w:pin(anchor)
    end)
    for k = 1, 3 do helpers.near(x1[k], x0[k], 1e-12, "same pendulum") end
  end)

  it("share the load between redundant rods and move as with one", function()
    local x0, rod0, _, w0 = pendulum()
    local x1, rod1, more, w1 = pendulum(function(w, pivot, bob) return { w:rod(pivot, bob) } end)
    for k = 1, 3 do helpers.near(x1[k], x0[k], 1e-8, "same motion") end
    w0:solve_constraints()
    w1:solve_constraints()
    helpers.near(rod1.lambda + more[1].lambda, rod0.lambda, 1e-8, "the two multipliers add up to one")
  end)

  it("survive inconsistent constraints (two rods of different lengths) without NaN", function()
    -- no force satisfies both: the solve notices (residual ~ 1) and falls back to a regularized
    -- least-squares compromise, so the bob swings somewhere between the two lengths
    local x, _, _, w = pendulum(function(w, pivot, bob) w:rod(pivot, bob, { length = 1.2 }) end)
    for k = 1, 3 do assert.is_true(x[k] == x[k] and math.abs(x[k]) < 2) end
    local r = math.sqrt(x[1] ^ 2 + x[2] ^ 2)
    assert.is_true(r > 1.0 and r < 1.2, "somewhere between the two lengths: " .. r)
    assert.is_true(w:profile().cg_residual > 1e-3, "the profile shows the ill-posed solve")
  end)

  it("tolerate a rod whose particles meet", function()
    local w = impetus.world { gravity = { 0, 0, 0 } }
    local a = w:particle { position = { 0, 0, 0 } }
    local b = w:particle { position = { 0, 0, 0 } }
    w:rod(a, b, { length = 1 })
    for _ = 1, 10 do assert.is_true(w:step(1 / 60)) end
    for k = 1, 3 do assert.are.equal(0, b.position[k]) end
  end)
end)

describe("curve particles (S3 section 5, Lagrangian dynamics)", function()
  local function circle(L)
    return function(u) return { L * math.sin(u), -L * math.cos(u), 0 } end
  end

  it("a particle on x(u) = L (sin u, -cos u) is the rod pendulum, simulated in u", function()
    local L, th = 1.2, 1.0
    local w = impetus.world()
    local pivot = w:particle { position = { 0, 0, 0 }, fixed = true }
    local bob = w:particle { position = circle(L)(th) }
    w:rod(pivot, bob)
    local w2 = impetus.world()
    local cp = w2:curve_particle { curve = circle(L), u = th }
    assert.is_true(cp.on_curve)
    for _ = 1, 240 do
      w:step(1 / 240)
      w2:step(1 / 240)
    end
    for k = 1, 3 do helpers.near(cp.position[k], bob.position[k], 1e-6, "position") end
    -- it is exactly on its curve, with velocity x_u u'
    local x = circle(L)(cp.u)
    for k = 1, 3 do helpers.near(cp.position[k], x[k], 1e-15, "on the curve") end
    helpers.near(len(cp.velocity), L * math.abs(cp.udot), 1e-7, "speed (x_u by central differences)")
    local T = period(w2, cp, 1 / 240)
    assert.is_true(T > 2 * math.pi * math.sqrt(L / G), "a large swing is slower than the small-angle period")
  end)

  it("has the small-angle period 2 pi sqrt(L / g) within 0.5% and conserves energy", function()
    local L, th = 1.5, 0.05
    local w = impetus.world()
    local cp = w:curve_particle { curve = circle(L), u = th }
    local T0 = 2 * math.pi * math.sqrt(L / G)
    local T = period(w, cp, 1 / 240)
    assert.is_true(math.abs(T - T0) / T0 < 0.005, "period " .. T)
    local w2 = impetus.world()
    local big = w2:curve_particle { curve = circle(L), u = 2.5 }
    local e0, de = w2:energy(), 0
    for _ = 1, 600 do
      w2:step(1 / 120)
      de = math.max(de, math.abs(w2:energy() - e0))
    end
    assert.is_true(de < 1e-5, "energy error " .. de)
    assert.is_true(big.u < 2.5, "it swung")
  end)

  it("gives the same motion with the curve's own derivatives as with numerical ones", function()
    local function run(with_derivatives)
      local w = impetus.world()
      local cp = w:curve_particle { u = 0.3, udot = 1, curve = function(u)
        local x = { u, math.cosh(u) - 1, 0 } -- a catenary
        if with_derivatives then return x, { 1, math.sinh(u), 0 }, { 0, math.cosh(u), 0 } end
        return x
      end }
      for _ = 1, 120 do w:step(1 / 120) end
      return cp.u, cp.udot
    end
    local u1, ud1 = run(true)
    local u2, ud2 = run(false)
    helpers.near(u2, u1, 1e-7, "u")
    helpers.near(ud2, ud1, 1e-7, "udot")
  end)

  it("carries a pendulum hanging by a rod from a bead on a horizontal curve (momentum along it is conserved)", function()
    local w = impetus.world()
    local bead = w:curve_particle { curve = function(u) return { u, 0, 0 }, { 1, 0, 0 }, { 0, 0, 0 } end, mass = 2 }
    local bob = w:particle { position = { 0.8, -0.6, 0 }, mass = 1 }
    w:rod(bead, bob)
    local worst, dc = 0, 0
    for _ = 1, 240 do
      w:step(1 / 240)
      local px = 2 * bead.velocity[1] + bob.velocity[1]
      worst = math.max(worst, math.abs(px))
      dc = math.max(dc, w:constraint_error())
    end
    assert.is_true(worst < 1e-9, "horizontal momentum " .. worst)
    assert.is_true(dc < 1e-6, "rod length error " .. dc)
    assert.is_true(math.abs(bead.u) > 0.01, "the bead was pulled along")
    assert.are.equal(0, bead.position[2])
  end)

  it("takes u and udot from the script, and refuses position, velocity and fixed", function()
    local w = impetus.world()
    local cp = w:curve_particle { curve = circle(1), range = { -math.pi, math.pi } }
    cp.u = math.pi / 2
    helpers.near(cp.position[1], 1, 1e-15, "moved to u")
    cp.udot = 2
    helpers.near(cp.velocity[2], 2, 1e-7, "velocity x_u udot (x_u by central differences)")
    assert.matches("set particle.u", err_of(function() cp.position = { 0, 0, 0 } end))
    assert.matches("set particle.u", err_of(function() cp.velocity = { 0, 0, 0 } end))
    assert.matches("particle.fixed", err_of(function() cp.fixed = true end))
    local p = w:particle {}
    assert.is_nil(p.u)
    assert.is_false(p.on_curve)
    assert.matches("not on a curve", err_of(function() p.u = 1 end))
    assert.matches("finite point", err_of(function() w:curve_particle { curve = function() return nil end } end))
    assert.matches("oops", err_of(function() w:curve_particle { curve = function() error("oops") end } end))
    assert.are.equal(2, w.particle_count)
  end)

  it("puts u back when it goes non-finite, through the NaN guard", function()
    -- a nearly degenerate tangent (|x_u| = 1e-149) with curvature: u'' = -(t . x_uu) u'^2 / (t . t)
    -- overflows within a few steps
    local w = impetus.world { gravity = { -G, 0, 0 } }
    local cp = w:curve_particle { u = 0, curve = function(u) return { u * 1e-149, 0, 0 }, { 1e-149, 0, 0 }, { 1, 0, 0 } end }
    local ok, msg
    for _ = 1, 10 do
      ok, msg = w:step(1 / 60)
      if not ok then break end
    end
    assert.is_false(ok)
    assert.matches("NaN guard", msg)
    assert.is_true(math.abs(cp.u) < 1e300 and cp.udot == 0, "u put back and stopped: " .. cp.u .. " " .. cp.udot)
    assert.is_true(cp.position[1] == cp.position[1], "position is a number")
  end)
end)

describe("the constraint API", function()
  it("creates each type with its parameters and reports them", function()
    local w = impetus.world()
    local a = w:particle { position = { 1, 0, 0 } }
    local b = w:particle { position = { 0, 2, 0 } }
    local rod = w:rod(a, b)
    assert.are.equal("rod", rod.type)
    assert.are.equal("constraint", rod.kind)
    helpers.near(rod.length, math.sqrt(5), 1e-15, "length")
    rod.length = 2
    assert.are.equal(2, rod.length)
    assert.are.equal(1, rod.rows)
    assert.are.equal(a, rod.particles[1])
    assert.are.equal(b, rod.particles[2])
    local wire = w:wire(a, { center = { 0, 0, 0 } })
    assert.are.equal("wire", wire.type)
    assert.are.equal(1, wire.radius)
    assert.are.same({ 0, 0, 1 }, wire.normal)
    assert.are.equal(2, wire.rows)
    assert.are.same({ 0, 0 }, wire.value)
    local line = w:on_line(b, { direction = { 0, 0, 2 } })
    assert.are.same({ 0, 0, 1 }, line.direction)
    assert.are.same({ 0, 2, 0 }, line.point)
    local plane = w:on_plane(b, { normal = { 0, 1, 0 }, point = { 0, 1, 0 } })
    helpers.near(plane.value, 1, 1e-15, "C of the plane")
    local pin = w:pin(a, { 0, 0, 0 })
    assert.are.same({ 1, 0, 0 }, pin.value)
    assert.is_nil(pin.length)
    assert.are.equal(5, w.constraint_count)
    assert.are.equal(5, #w:constraints())
    rod.color = { 1, 0, 0 }
    assert.are.same({ 1, 0, 0, 1 }, rod.color)
  end)

  it("has settable solver settings that refuse bad values", function()
    local w = impetus.world()
    assert.are.equal(100, w.constraint_ks)
    assert.are.equal(20, w.constraint_kd)
    assert.are.equal("ic", w.constraint_preconditioner)
    w.constraint_ks, w.constraint_kd, w.constraint_tolerance, w.constraint_max_iterations = 10, 2, 1e-6, 50
    w.constraint_preconditioner = "jacobi"
    assert.are.same({ 10, 2, 1e-6, 50, "jacobi" }, { w.constraint_ks, w.constraint_kd, w.constraint_tolerance,
      w.constraint_max_iterations, w.constraint_preconditioner })
    assert.matches("constraint_ks must be >= 0", err_of(function() w.constraint_ks = -1 end))
    assert.matches("constraint_tolerance must be > 0", err_of(function() w.constraint_tolerance = 0 end))
    assert.matches("whole number", err_of(function() w.constraint_max_iterations = 1.5 end))
    assert.matches("world.constraint_preconditioner must be \"ic\", \"jacobi\" or \"none\" %(got \"cholesky\"%)",
      err_of(function() w.constraint_preconditioner = "cholesky" end))
  end)

  it("names the function and the argument in errors", function()
    local w = impetus.world()
    local a = w:particle { position = { 0, 0, 0 } }
    local b = w:particle { position = { 1, 0, 0 } }
    assert.matches("world:rod: argument 'b' must be a Particle", err_of(function() w:rod(a, 3) end))
    assert.matches("two different particles", err_of(function() w:rod(a, a) end))
    assert.matches("field 'length' must be > 0", err_of(function() w:rod(a, b, { length = -1 }) end))
    assert.matches("unknown field 'lenght'", err_of(function() w:rod(a, b, { lenght = 1 }) end))
    local c = w:particle { position = { 0, 0, 0 } }
    assert.matches("same place", err_of(function() w:rod(a, c) end))
    assert.matches("world:pin: argument 'point'", err_of(function() w:pin(a, "here") end))
    assert.matches("world:wire: field 'radius' must be > 0", err_of(function() w:wire(a, { radius = 0 }) end))
    assert.matches("on the wire's axis", err_of(function() w:wire(a, { center = { 0, 0, 0 } }) end))
    assert.matches("field 'normal' is required", err_of(function() w:on_plane(a, {}) end))
    assert.matches("field 'direction' must not be zero", err_of(function() w:on_line(a, { direction = { 0, 0, 0 } }) end))
    assert.matches("field 'C' must be a function", err_of(function() w:constraint { particles = { a } } end))
    assert.matches("listed twice", err_of(function() w:constraint { particles = { a, a }, C = print } end))
    assert.matches("1 to 8 particles", err_of(function() w:constraint { particles = {}, C = print } end))
    local other = impetus.world():particle {}
    assert.matches("another world", err_of(function() w:rod(a, other) end))
    assert.matches("field 'curve' must be a function", err_of(function() w:curve_particle {} end))
    assert.matches("field 'range'", err_of(function() w:curve_particle { curve = print, range = 3 } end))
  end)

  it("detects stale handles and drops the constraints of a destroyed particle", function()
    local w = impetus.world()
    local a = w:particle { position = { 0, 0, 0 }, fixed = true }
    local b = w:particle { position = { 1, 0, 0 } }
    local c = w:particle { position = { 2, 0, 0 } }
    local r1, r2 = w:rod(a, b), w:rod(b, c)
    c:destroy()
    assert.is_true(r1:valid())
    assert.is_false(r2:valid())
    assert.matches("stale Constraint handle", err_of(function() return r2.lambda end))
    assert.matches("stale Particle handle", err_of(function() w:rod(a, c) end))
    r2:destroy() -- harmless
    r1:destroy()
    assert.are.equal(0, w.constraint_count)
    for _ = 1, 10 do w:step(1 / 60) end
    assert.is_true(b.position[2] < 0, "free again: falls")
  end)

  it("reports the solver's work in the profile", function()
    local w = impetus.world()
    local a = w:particle { position = { 0, 0, 0 }, fixed = true }
    local b = w:particle { position = { 1, 0, 0 } }
    w:rod(a, b)
    w:step(1 / 60)
    local p = w:profile()
    assert.are.equal(4, p.cg_solves)
    assert.is_true(p.cg_iterations >= 1 and p.cg_iterations <= 4, "one row: at most one iteration per solve")
    assert.is_true(p.cg_residual < 1e-9)
    assert.is_true(p.constraints >= 0)
  end)
end)

describe("constraints and the implicit integrator", function()
  it("are refused with a clear error, the world unchanged", function()
    local impetus = require "impetus"
    local w = impetus.world { integrator = "implicit" }
    local a = w:particle { position = { 0, 1, 0 }, fixed = true }
    local b = w:particle { position = { 1, 1, 0 } }
    w:rod(a, b)
    local ok, err = pcall(w.step, w, 1 / 60)
    assert.is_false(ok)
    assert.matches("need an explicit integrator", err)
    assert.are.equal(0, w.time)
    assert.are.same({ 1, 1, 0 }, b.position)
    w.integrator = "rk4"
    assert.is_true(w:step(1 / 60))
  end)
end)
