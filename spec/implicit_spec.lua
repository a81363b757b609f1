-- Implicit integration (S3 "Implicit methods"; Baraff and Witkin, "Large steps in cloth
-- simulation"): backward Euler on stiff systems, the world's implicit integrator, its Jacobians,
-- its conjugate gradient and its filter (pinned particles, resting contact, friction).
local impetus = require "impetus"
local helpers = require "helpers"
local ode = impetus.ode

local function err_of(fn, ...)
  local ok, err = pcall(fn, ...)
  assert.is_false(ok, "expected an error")
  return tostring(err)
end

describe("backward Euler on the stiff pair x' = -x, y' = -k y (S3 2-1)", function()
  local k = 1000
  local f = function(x) return { -x[1], -k * x[2] } end

  it("takes one step to the closed form x / (1 + h), y / (1 + h k), for any h", function()
    for _, h in ipairs({ 0.001, 0.01, 0.1, 1, 10 }) do
      local x = ode.step(f, { 1, 1 }, 0, h, "implicit")
      -- |x0| = 1: the finite-difference Jacobian is exact for a linear f up to rounding
      helpers.near(x[1], 1 / (1 + h), 1e-10, "x at h = " .. h)
      helpers.near(x[2], 1 / (1 + h * k), 1e-10, "y at h = " .. h)
    end
  end)

  it("is stable where explicit Euler explodes (h k > 2)", function()
    local h = 0.01 -- h k = 10
    local xe, xi = { 1, 1 }, { 1, 1 }
    for _ = 1, 20 do
      xe = ode.step(f, xe, 0, h, "euler")
      xi = ode.step(f, xi, 0, h, "implicit")
    end
    assert.is_true(math.abs(xe[2]) > 1e15, "explicit Euler should have exploded: " .. xe[2])
    helpers.near(xi[2], (1 + h * k) ^ -20, 1e-12, "implicit y after 20 steps")
    helpers.near(xi[1], (1 + h) ^ -20, 1e-9, "implicit x after 20 steps")
  end)

  it("reaches the origin in one step as h grows without bound", function()
    local x = ode.step(f, { 0.7, -2 }, 0, 1e12, "implicit")
    helpers.near(x[1], 0, 1e-9, "x")
    helpers.near(x[2], 0, 1e-9, "y")
  end)

  it("carries the time derivative with its factor h (S3 4-6, GUIDE.md trap 6)", function()
    -- x' = -k (x - sin t): linearized backward Euler gives x1 = (x0 + h k (sin t0 + h cos t0)) / (1 + h k)
    local kk, h, t0, x0 = 50, 0.2, 0.3, 0.8
    local x = ode.step(function(s, t) return { -kk * (s[1] - math.sin(t)) } end, { x0 }, t0, h, "implicit")
    helpers.near(x[1], (x0 + h * kk * (math.sin(t0) + h * math.cos(t0))) / (1 + h * kk), 1e-9, "x1")
  end)

  it("is first order, and works in ode.solve and as the adaptive method's base", function()
    assert.are.equal(1, ode.order("implicit"))
    local g = function(x) return { x[2], -x[1] } end -- x = cos t
    local function err(h)
      local x = ode.solve(g, { 1, 0 }, 0, 1, { method = "implicit", h = h })
      return math.abs(x[1] - math.cos(1)) + math.abs(x[2] + math.sin(1))
    end
    helpers.near(err(0.01) / err(0.005), 2, 0.1, "error ratio when h halves")
    local x, info = ode.solve(f, { 1, 1 }, 0, 1, { method = "adaptive", base = "implicit", tol = 1e-4 })
    helpers.near(x[1], math.exp(-1), 1e-2, "adaptive implicit x(1)")
    assert.is_true(info.steps > 0)
  end)

  it("reports a singular matrix clearly", function()
    -- f' = 1/h at x = 0 makes I - h f' singular
    assert.matches("singular", err_of(function() ode.step(function(x) return { 10 * x[1] } end, { 0 }, 0, 0.1, "implicit") end))
  end)
end)

-- a vertical chain of n particles on springs below a fixed anchor
local function chain(w, n, m, ks, kd)
  local anchor = w:particle { position = { 0, 0, 0 }, fixed = true }
  local ps, prev = {}, anchor
  for i = 1, n do
    local p = w:particle { position = { 0, -0.1 * i, 0 }, mass = m }
    w:spring(prev, p, { ks = ks, kd = kd, rest = 0.1 })
    ps[i], prev = p, p
  end
  return ps
end

describe("the world's implicit integrator", function()
  it("is stable with springs at which explicit Euler diverges, and settles at the static solution", function()
    local n, m, ks, h = 10, 0.01, 2000, 1 / 60 -- h^2 ks / m = 5.6: Euler's limit is 4 and less
    local we = impetus.world { integrator = "euler" }
    local pe = chain(we, n, m, ks, 0)
    local wi = impetus.world { integrator = "implicit" }
    wi.cg_tolerance = 1e-10
    local pi_ = chain(wi, n, m, ks, 0)
    local exploded = false
    for _ = 1, 120 do
      local ok = we:step(h)
      if not ok or math.abs(pe[n].position[2]) > 100 then exploded = true break end
    end
    assert.is_true(exploded, "explicit Euler should diverge at this stiffness")
    for _ = 1, 600 do wi:step(h) end
    -- at rest, spring i carries the weight of the n - i + 1 particles below it
    local y = 0
    for i = 1, n do
      y = y - 0.1 - (n - i + 1) * m * 9.81 / ks
      helpers.near(pi_[i].position[2], y, 1e-8, "particle " .. i)
    end
  end)

  it("loses energy monotonically on a damped spring, swinging in 3D", function()
    for _, h in ipairs({ 1 / 60, 1 / 10 }) do
      local w = impetus.world { integrator = "implicit", gravity = { 0, 0, 0 } }
      local p = w:particle { position = { 1.5, 0, 0 }, velocity = { 0, 2, 0.5 }, mass = 0.2 }
      w:spring(p, { 0, 0, 0 }, { ks = 500, kd = 0.5, rest = 1 })
      local e = w:energy()
      local e0 = e
      for i = 1, 300 do
        w:step(h)
        local e1 = w:energy()
        assert.is_true(e1 <= e * (1 + 1e-12), string.format("energy rose at step %d (h = %g): %.15g -> %.15g", i, h, e, e1))
        e = e1
      end
      -- the radial motion dies out; the orbit (angular momentum about the anchor) remains
      assert.is_true(e < 0.8 * e0, string.format("energy %.6g of %.6g left", e, e0))
    end
  end)

  it("solves its system to the CG tolerance", function()
    local function swing(tol)
      local w = impetus.world { integrator = "implicit" }
      w.cg_tolerance = tol
      w:cloth { rows = 12, cols = 12, size = 1, pin = "top_corners", position = { 0, 2, 0 } }
      local its, worst = 0, 0
      for _ = 1, 40 do
        w:step(1 / 60)
        local p = w:profile()
        its = its + p.cg_iterations
        worst = math.max(worst, p.cg_residual)
      end
      return its, worst
    end
    local its6, res6 = swing(1e-6)
    local its2, res2 = swing(1e-2)
    assert.is_true(res6 <= 1e-6, "residual " .. res6)
    assert.is_true(res2 <= 1e-2, "residual " .. res2)
    assert.is_true(its6 > its2, "a tighter tolerance takes more iterations")
  end)

  it("keeps fixed particles fixed (the filter, no huge masses) and moves kinematic ones exactly", function()
    local w = impetus.world { integrator = "implicit" }
    local a = w:particle { position = { 0, 1, 0 }, fixed = true }
    local k = w:particle { position = { 1, 1, 0 }, kinematic = true, velocity = { 0.5, 0, 0 } }
    local b = w:particle { position = { 0.5, 0.5, 0 } }
    w:spring(a, b, { ks = 1e4, kd = 1 })
    w:spring(k, b, { ks = 1e4, kd = 1 })
    for _ = 1, 60 do w:step(1 / 60) end
    assert.are.same({ 0, 1, 0 }, a.position)
    helpers.near(k.position[1], 1.5, 1e-12, "kinematic x")
    assert.are.same({ 0.5, 0, 0 }, k.velocity)
  end)

  it("rests on a plane without jitter, and Coulomb friction holds or lets go on a slope", function()
    local mu = 0.4
    for _, deg in ipairs({ 15, 30 }) do
      local a = math.rad(deg)
      local w = impetus.world { integrator = "implicit" }
      local n = { -math.sin(a), math.cos(a), 0 }
      w:plane { normal = n, friction = mu, restitution = 0 }
      local p = w:particle { position = { 0, 0.05, 0 }, radius = 0.05 }
      for _ = 1, 60 do w:step(1 / 60) end
      local v0 = p.velocity
      for _ = 1, 60 do w:step(1 / 60) end
      local v1 = p.velocity
      local speed0 = math.sqrt(v0[1] ^ 2 + v0[2] ^ 2 + v0[3] ^ 2)
      local speed1 = math.sqrt(v1[1] ^ 2 + v1[2] ^ 2 + v1[3] ^ 2)
      local x = p.position
      helpers.near(x[1] * n[1] + x[2] * n[2], 0.05, 1e-9, "distance from the plane")
      if math.tan(a) < mu then
        assert.is_true(speed1 < 1e-12, "static friction holds at " .. deg .. " degrees: " .. speed1)
      else
        -- sliding: dv/dt = g (sin a - mu cos a), exactly per step
        helpers.near(speed1 - speed0, 9.81 * (math.sin(a) - mu * math.cos(a)), 1e-9, "acceleration")
      end
    end
  end)

  it("gives the same result to the last bit with one thread or two", function()
    local script = [[
      local impetus = require "impetus"
      local w = impetus.world { integrator = "implicit" }
      w:sphere { static = true, position = { 0, 1, 0 }, radius = 0.4 }
      local cl = w:cloth { rows = 24, cols = 24, size = 1.2, position = { 0, 1.6, 0 }, pin = "top_corners" }
      for _ = 1, 30 do w:step(1 / 60) end
      local out = {}
      for _, p in ipairs(cl:particles()) do
        local x = p.position
        out[#out + 1] = string.format("%.17g %.17g %.17g", x[1], x[2], x[3])
      end
      return table.concat(out, "\n")
    ]]
    local here = load(script)()
    local out, code = helpers.run_elsewhere(script, "IMPETUS_THREADS=1")
    assert.are.equal(0, code, out)
    assert.is_true(out == here, "one thread and two disagree")
  end)

  it("gives the same result to the last bit from the vector kernels and the scalar ones", function()
    -- a bending cloth (the bend kernel, the triangles' blocks) on a sphere (contacts in the filter),
    -- solved by CG with the multigrid (the column-major products); IMPETUS_SIMD=0 runs the scalar code
    local script = [[
      local impetus = require "impetus"
      local w = impetus.world { integrator = "implicit" }
      w:sphere { static = true, position = { 0, 1, 0 }, radius = 0.4 }
      local cl = w:cloth { rows = 24, cols = 24, size = 1.2, position = { 0, 1.6, 0 }, pin = "top_corners",
        bend = 1e-3 }
      for _ = 1, 30 do w:step(1 / 60) end
      local out = {}
      for _, p in ipairs(cl:particles()) do
        local x, v = p.position, p.velocity
        out[#out + 1] = string.format("%a %a %a %a %a %a", x[1], x[2], x[3], v[1], v[2], v[3])
      end
      return table.concat(out, "\n")
    ]]
    local here = load(script)()
    local out, code = helpers.run_elsewhere(script, "IMPETUS_SIMD=0")
    assert.are.equal(0, code, out)
    assert.are.equal(24 * 24, select(2, here:gsub("\n", "")) + 1)
    assert.is_true(out == here, "the vector and the scalar paths disagree")
  end)

  it("undoes a step whose force field fails, as the explicit integrators do", function()
    local w = impetus.world { integrator = "implicit" }
    local p = w:particle { position = { 0, 1, 0 } }
    w:step(1 / 60)
    local x = p.position
    w:field(function() error("boom") end)
    assert.matches("boom", err_of(function() w:step(1 / 60) end))
    assert.are.same(x, p.position)
    assert.are.equal(1, w.steps)
  end)

  it("has settings with clear errors", function()
    local w = impetus.world { integrator = "implicit" }
    assert.are.equal("implicit", w.integrator)
    assert.are.equal(1e-2, w.cg_tolerance)
    assert.are.equal("definite", w.jacobian)
    w.cg_tolerance, w.cg_max_iterations, w.jacobian = 1e-4, 50, "full"
    assert.are.equal(1e-4, w.cg_tolerance)
    assert.are.equal(50, w.cg_max_iterations)
    assert.are.equal("full", w.jacobian)
    assert.matches("cg_tolerance must be in", err_of(function() w.cg_tolerance = 0 end))
    assert.matches("cg_max_iterations must be in", err_of(function() w.cg_max_iterations = 0 end))
    assert.matches("\"definite\" or \"full\"", err_of(function() w.jacobian = "exact" end))
    assert.matches("\"implicit\"", err_of(function() w.integrator = "backward" end))
  end)
end)

describe("force Jacobians against finite differences of the forces", function()
  local function check(w, what)
    local r = w:jacobian_check()
    assert.is_true(r.dfdx_max > 0 and r.dfdv_max > 0, what .. ": nothing was checked")
    assert.is_true(r.dfdx < 1e-6, what .. ": df/dx relative error " .. r.dfdx)
    assert.is_true(r.dfdv < 1e-6, what .. ": df/dv relative error " .. r.dfdv)
    assert.is_true(r.matrix < 1e-12, what .. ": the step's fused kernels disagree by " .. r.matrix)
  end
  math.randomseed(7)
  local function jiggle(ps, dx, dv)
    for _, p in ipairs(ps) do
      if p and not p.fixed then
        local x = p.position
        p.position = { x[1] + dx * (math.random() - 0.5), x[2] + dx * (math.random() - 0.5), x[3] + dx * (math.random() - 0.5) }
        p.velocity = { dv * (math.random() - 0.5), dv * (math.random() - 0.5), dv * (math.random() - 0.5) }
      end
    end
  end

  it("springs (stretched, compressed, anchored, damped) and drag", function()
    local w = impetus.world { drag = 0.3 }
    local a = w:particle { position = { 0, 0, 0 }, velocity = { 0.1, 0.2, 0.3 } }
    local b = w:particle { position = { 1, 0.2, 0.1 }, velocity = { -0.3, 0.1, 0 } }
    local c = w:particle { position = { 0.3, 1, 0.1 }, velocity = { 0, 0.5, 0 } }
    w:spring(a, b, { ks = 100, kd = 2, rest = 1.5 }) -- compressed
    w:spring(b, c, { ks = 50, kd = 1, rest = 0.5 })  -- stretched
    w:spring(c, { 0, 2, 0 }, { ks = 30, kd = 1, rest = 0.2 })
    check(w, "springs")
  end)

  it("built-in behaviours (distance, coincide, anchor, plane)", function()
    local w = impetus.world {}
    local a = w:particle { position = { 0, 0, 0 }, velocity = { 0.1, 0.2, 0.3 } }
    local b = w:particle { position = { 1, 0.2, 0.1 }, velocity = { -0.3, 0.1, 0 } }
    w:behavior { kind = "distance", particles = { a, b }, ks = 20, kd = 0.5, rest = 0.7 }
    w:behavior { kind = "coincide", particles = { a, b }, ks = 5, kd = 0.5 }
    w:behavior { kind = "anchor", particles = { b }, ks = 5, kd = 0.5, point = { 1, 1, 1 } }
    w:behavior { kind = "plane", particles = { a }, ks = 5, kd = 0.5, normal = { 0, 1, 1 }, offset = 0.1 }
    check(w, "behaviours")
    w:behavior { kind = "function", particles = { a }, fn = function(x) return x[1], { 1, 0, 0 } end }
    assert.matches("no analytic Hessian", err_of(function() w:jacobian_check() end))
  end)

  it("cloth stretch, shear and bend on a deformed, moving grid", function()
    local w = impetus.world {}
    local cl = w:cloth { rows = 4, cols = 5, size = { 1, 0.8 }, normal = { 0, 0, 1 }, pin = "top",
      stretch = 1000, shear = 50, bend = 0.01, damping = 0.02 }
    jiggle(cl:particles(), 0.08, 1)
    check(w, "grid cloth")
  end)

  it("cloth on a curved mesh with (u, v) coordinates, and the full stiffness", function()
    local w = impetus.world {}
    w.jacobian = "full"
    local verts, tris, uv = {}, {}, {}
    for i = 0, 4 do
      for j = 0, 2 do
        local a = i * 0.3
        verts[#verts + 1] = { math.sin(a), 1 - math.cos(a), 0.4 * j }
        uv[#uv + 1] = { a, 0.4 * j }
      end
    end
    for i = 0, 3 do
      for j = 0, 1 do
        local v = i * 3 + j + 1
        tris[#tris + 1] = { v, v + 3, v + 1 }
        tris[#tris + 1] = { v + 1, v + 3, v + 4 }
      end
    end
    local cl = w:cloth { vertices = verts, triangles = tris, uv = uv, stretch = 500, shear = 80, bend = 0.02, damping = 0.01 }
    jiggle(cl:particles(), 0.06, 1)
    check(w, "mesh cloth")
  end)

  it("hair segments and angular springs, straight and bent, with a moving root", function()
    local w = impetus.world {}
    local h = w:hair { root = { 0, 1, 0 }, direction = { 1, 0, 0 }, length = 0.4, segments = 5, bend = 1e-3,
      stretch = 20, damping = 0.05, root_motion = "kinematic" }
    check(w, "straight hair") -- theta = 0 exactly: the smooth form of theta^2
    h:particle(1).velocity = { 0.3, 0, 0.1 }
    h.anchor.velocity = { 0.3, 0, 0.1 }
    jiggle({ table.unpack(h:particles(), 2) }, 0.05, 1)
    check(w, "bent hair")
  end)
end)
