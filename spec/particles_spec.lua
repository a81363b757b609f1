-- Particle dynamics (S3 "Particle system dynamics"): forces against closed forms, collisions,
-- contact and friction.
local impetus = require "impetus"
local helpers = require "helpers"

local G = 9.81

describe("free particles", function()
  it("follow the projectile's closed form exactly (RK4 is exact for constant acceleration)", function()
    for _, method in ipairs({ "rk4", "midpoint", "adaptive" }) do
      local w = impetus.world { integrator = method }
      local p = w:particle { position = { 0, 1, 0 }, velocity = { 3, 4, -1 } }
      for _ = 1, 60 do w:step(1 / 60) end
      local x = p.position
      helpers.near(x[1], 3, 1e-9, method .. " x")
      helpers.near(x[2], 1 + 4 - G / 2, 1e-9, method .. " y")
      helpers.near(x[3], -1, 1e-9, method .. " z")
    end
  end)

  it("under viscous drag approach the closed form x = v_inf t + (v0 - v_inf) tau (1 - e^(-t/tau))", function()
    local m, kd = 2, 0.8
    local w = impetus.world { drag = kd }
    local v0 = { 5, 10, 0 }
    local p = w:particle { mass = m, velocity = v0 }
    for _ = 1, 120 do w:step(1 / 60) end
    local tau, t = m / kd, 2
    local vinf = -G * tau
    local y = vinf * t + (v0[2] - vinf) * tau * (1 - math.exp(-t / tau))
    local x = v0[1] * tau * (1 - math.exp(-t / tau))
    helpers.near(p.position[1], x, 1e-8, "x")
    helpers.near(p.position[2], y, 1e-8, "y")
    helpers.near(p.velocity[2], vinf + (v0[2] - vinf) * math.exp(-t / tau), 1e-8, "vy")
  end)
end)

describe("a large store of free particles", function()
  -- From 2048 separable particles the store is stepped in parallel, RK4 particle by particle
  -- (particle_system.c, rk4_particles); a world of one particle goes through the ODE solver. Each
  -- particle's ODE is its own, so both must give it the same bits: with drag, on the ground in a
  -- resting contact, fixed and kinematic.
  it("gives every particle the bits a world of that particle alone gives it", function()
    local function make(w, k)
      local y = k % 5 == 0 and 0.05 or 0.3 + 0.001 * (k % 13)
      local v = k % 5 == 0 and { 0.02 * (k % 3), 0, 0.01 } or { 0.1 * (k % 7) - 0.3, 0.2 * (k % 3), -0.05 * (k % 4) }
      return w:particle { position = { 0.01 * (k % 50), y, 0.01 * (k // 50) }, velocity = v, radius = 0.05,
        mass = 0.5 + 0.1 * (k % 4), friction = 0.3, fixed = k % 97 == 0, kinematic = k % 89 == 0 }
    end
    local function world()
      local w = impetus.world { integrator = "rk4", drag = 0.3 }
      w:plane { friction = 0.5, restitution = 0 }
      return w
    end
    local big, all = world(), {}
    for k = 1, 2400 do all[k] = make(big, k) end
    for _ = 1, 30 do big:step(1 / 60) end
    for _, k in ipairs({ 1, 5, 97, 178, 1000, 2400 }) do
      local alone = world()
      local p = make(alone, k)
      for _ = 1, 30 do alone:step(1 / 60) end
      for a = 1, 3 do
        assert.are.equal(string.format("%a", p.position[a]), string.format("%a", all[k].position[a]), "particle " .. k .. " x")
        assert.are.equal(string.format("%a", p.velocity[a]), string.format("%a", all[k].velocity[a]), "particle " .. k .. " v")
      end
    end
    assert.is_true(big.contact_count > 0, "resting contacts on the ground")
  end)
end)

describe("damped spring (S3 eq. 1)", function()
  it("oscillates as the damped oscillator's closed form", function()
    local m, ks, kd = 0.5, 40, 0.6
    local w = impetus.world { gravity = { 0, 0, 0 } }
    local p = w:particle { mass = m, position = { 1, 0, 0 } }
    w:spring(p, { 0, 0, 0 }, { ks = ks, kd = kd, rest = 0 })
    local w0 = math.sqrt(ks / m)
    local zeta = kd / (2 * math.sqrt(ks * m))
    local wd = w0 * math.sqrt(1 - zeta ^ 2)
    local worst = 0
    for i = 1, 300 do
      w:step(1 / 120)
      local t = i / 120
      local x = math.exp(-zeta * w0 * t) * (math.cos(wd * t) + zeta * w0 / wd * math.sin(wd * t))
      worst = math.max(worst, math.abs(p.position[1] - x))
    end
    assert.is_true(worst < 5e-6, "largest deviation " .. worst)
  end)

  it("is reproduced exactly by the energy function C = |l| - r (S3 eq. 2)", function()
    local function build(use_behavior)
      local w = impetus.world { gravity = { 0, -3, 0 } }
      local a = w:particle { position = { 0, 0, 0 }, velocity = { 0.3, 1, -0.2 }, mass = 1.5 }
      local b = w:particle { position = { 1.2, 0.4, 0.1 }, velocity = { -1, 0.5, 0.7 }, mass = 0.7 }
      if use_behavior then
        w:behavior { kind = "distance", particles = { a, b }, ks = 30, kd = 0.9, rest = 1 }
      else
        w:spring(a, b, { ks = 30, kd = 0.9, rest = 1 })
      end
      for _ = 1, 200 do w:step(1 / 60) end
      return a.position, b.velocity
    end
    local xa1, vb1 = build(false)
    local xa2, vb2 = build(true)
    for k = 1, 3 do
      helpers.near(xa2[k], xa1[k], 1e-12, "position")
      helpers.near(vb2[k], vb1[k], 1e-12, "velocity")
    end
  end)

  it("a Lua behaviour function gives the same force as the built-in one", function()
    local function run(kind)
      local w = impetus.world { gravity = { 0, 0, 0 } }
      local a = w:particle { position = { 0, 0, 0 }, fixed = true }
      local b = w:particle { position = { 1.5, 0.2, 0 }, velocity = { 0, 1, 0 } }
      if kind == "lua" then
        w:behavior { kind = "function", particles = { a, b }, ks = 20, kd = 0.5, fn = function(x1, x2)
          local l = { x1[1] - x2[1], x1[2] - x2[2], x1[3] - x2[3] }
          local len = math.sqrt(l[1] ^ 2 + l[2] ^ 2 + l[3] ^ 2)
          local u = { l[1] / len, l[2] / len, l[3] / len }
          return len - 1, u, { -u[1], -u[2], -u[3] }
        end }
      else
        w:behavior { kind = "distance", particles = { a, b }, ks = 20, kd = 0.5, rest = 1 }
      end
      for _ = 1, 100 do w:step(1 / 60) end
      return b.position
    end
    local p1, p2 = run("lua"), run("builtin")
    for k = 1, 3 do helpers.near(p1[k], p2[k], 1e-12, "position") end
  end)

  it("anchor behaviour holds a particle at its point against gravity, like a zero-length spring", function()
    local w = impetus.world()
    local p = w:particle { position = { 0, 1, 0 } }
    w:behavior { kind = "anchor", particles = { p }, point = { 0, 1, 0 }, ks = 100, kd = 5 }
    for _ = 1, 600 do w:step(1 / 60) end
    helpers.near(p.position[2], 1 - G / 100, 1e-6, "rest sag m g / ks")
  end)
end)

describe("collisions with planes", function()
  it("rebound to r^2 h0 and keep the tangential velocity", function()
    for _, r in ipairs({ 0.9, 0.6, 0.3 }) do
      local w = impetus.world()
      w:plane { restitution = r, friction = 0 }
      local h0 = 2
      local p = w:particle { position = { 0, h0, 0 }, velocity = { 0.7, 0, 0 }, radius = 0 }
      local bounced = false
      for _ = 1, 200 do
        w:step(1 / 60)
        if p.velocity[2] > 0 then bounced = true break end
      end
      assert.is_true(bounced)
      local y, vy = p.position[2], p.velocity[2]
      helpers.near(y + vy * vy / (2 * G), r * r * h0, 1e-9, "apex for r = " .. r)
      helpers.near(p.velocity[1], 0.7, 1e-12, "tangential velocity")
    end
  end)

  it("a sliding particle stops after v^2 / (2 mu g) and stays", function()
    for _, mu in ipairs({ 0.2, 0.5 }) do
      local w = impetus.world()
      w:plane { friction = mu, restitution = 0 }
      local v = 4
      local p = w:particle { position = { 0, 0, 0 }, velocity = { v, 0, 0 }, radius = 0 }
      for _ = 1, 300 do w:step(1 / 60) end
      helpers.near(p.position[1], v * v / (2 * mu * G), 2e-3 * v * v / (2 * mu * G), "stopping distance, mu = " .. mu)
      helpers.near(p.velocity[1], 0, 1e-12, "stopped")
      helpers.near(p.position[2], 0, 1e-12, "on the ground")
    end
  end)

  it("static friction holds a particle on a slope below tan(theta) = mu and lets it slide above", function()
    for _, case in ipairs({ { angle = 0.3, mu = 0.5, slides = false }, { angle = 0.6, mu = 0.5, slides = true } }) do
      local th = case.angle
      local w = impetus.world()
      local n = { -math.sin(th), math.cos(th), 0 }
      w:plane { normal = n, friction = case.mu, restitution = 0 }
      local p = w:particle { position = { 0, 0, 0 }, radius = 0 }
      for _ = 1, 120 do w:step(1 / 60) end
      local d = math.sqrt(p.position[1] ^ 2 + p.position[2] ^ 2)
      if case.slides then
        -- a = g (sin theta - mu cos theta) along the slope
        local a = G * (math.sin(th) - case.mu * math.cos(th))
        helpers.near(d, 0.5 * a * 4, 0.01, "slide distance after 2 s")
      else
        assert.is_true(d < 1e-9, "moved " .. d)
      end
    end
  end)

  it("resting contact cancels the normal force exactly: no sinking, no jitter", function()
    local w = impetus.world()
    w:plane {}
    local p = w:particle { position = { 0, 0.05, 0 }, radius = 0.05 }
    for _ = 1, 600 do w:step(1 / 60) end
    assert.are.equal(0.05, p.position[2])
    assert.are.equal(0, p.velocity[2])
    assert.are.equal(1, w.contact_count)
  end)

  it("nothing tunnels through a thin box or the ground at 100 m/s", function()
    local w = impetus.world()
    w:plane {}
    w:box { static = true, position = { 0, 5, 0 }, size = { 4, 0.05, 4 }, restitution = 0.2 }
    local a = w:particle { position = { 0, 20, 0 }, velocity = { 0, -100, 0 }, radius = 0.01 }
    local b = w:particle { position = { 3, 20, 0 }, velocity = { 0, -100, 0 }, radius = 0.01 }
    for _ = 1, 120 do
      w:step(1 / 60)
      assert.is_true(a.position[2] > 5, "went through the box: y = " .. a.position[2])
      assert.is_true(b.position[2] >= 0, "went through the ground: y = " .. b.position[2])
    end
  end)
end)

describe("collisions with spheres", function()
  it("bounce off the top with restitution and never end inside", function()
    local w = impetus.world()
    w:sphere { static = true, position = { 0, 0, 0 }, radius = 1, restitution = 0.5, friction = 0 }
    local p = w:particle { position = { 0, 3, 0 }, radius = 0.1 }
    local up
    for _ = 1, 120 do
      w:step(1 / 120)
      local x = p.position
      assert.is_true(math.sqrt(x[1] ^ 2 + x[2] ^ 2 + x[3] ^ 2) >= 1.1 - 1e-9)
      if not up and p.velocity[2] > 0 then up = p.velocity[2] end
    end
    -- impact speed sqrt(2 g 1.9), rebound half of it (the toi is found on the swept segment)
    helpers.near(up, 0.5 * math.sqrt(2 * G * 1.9), 0.05, "rebound speed")
  end)
end)

describe("force fields", function()
  it("add a Lua force to every dynamic particle", function()
    local w = impetus.world { gravity = { 0, 0, 0 } }
    local p = w:particle { mass = 2 }
    local f = w:field(function(x, y, z, vx, vy, vz, t) return 4, 0, 0 end)
    for _ = 1, 60 do w:step(1 / 60) end
    helpers.near(p.position[1], 0.5 * (4 / 2) * 1, 1e-12, "x = F t^2 / (2 m)")
    f:destroy()
    local v = p.velocity[1]
    w:step(1 / 60)
    helpers.near(p.velocity[1], v, 1e-15, "no force once destroyed")
  end)

  it("errors are reported after the step with the world intact", function()
    local w = impetus.world()
    local p = w:particle { position = { 0, 5, 0 } }
    w:field(function(x, y) if y < 4.9 then return "not a number" end end)
    local ok, err
    for _ = 1, 60 do
      ok, err = pcall(w.step, w, 1 / 60)
      if not ok then break end
    end
    assert.is_false(ok)
    assert.matches("three finite numbers", err)
    local y, t = p.position[2], w.time
    assert.is_true(y >= 4.9)
    pcall(w.step, w, 1 / 60)
    assert.are.equal(y, p.position[2])
    assert.are.equal(t, w.time)
  end)
end)

describe("the NaN guard", function()
  it("puts back particles that went non-finite, stops them and reports it", function()
    local w = impetus.world { integrator = "euler" }
    local a = w:particle { position = { 0, 1, 0 } }
    local b = w:particle { position = { 1, 1, 0 } }
    local c = w:particle { position = { 5, 5, 5 }, velocity = { 1, 0, 0 } }
    w:spring(a, b, { ks = 1e300, kd = 0, rest = 0.5 })
    local ok, msg
    for _ = 1, 5 do
      ok, msg = w:step(1)
      if not ok then break end
    end
    assert.is_false(ok)
    assert.matches("NaN guard: 2 particle%(s%) went non%-finite", msg)
    for _, p in ipairs({ a, b }) do
      for k = 1, 3 do
        assert.is_true(p.position[k] == p.position[k] and math.abs(p.position[k]) < math.huge)
        assert.are.equal(0, p.velocity[k])
      end
    end
    assert.is_true(c.position[1] > 5, "the healthy particle moved on")
  end)
end)
