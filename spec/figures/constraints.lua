-- spec/figures/constraints.lua: prints the measured figures of constrained dynamics quoted in
-- docs/constraints.md (the specs in spec/constraint_spec.lua assert bounds on the same quantities).
-- Run from the checkout: LUA_PATH='scripts/?.lua;scripts/?/init.lua;;' LUA_CPATH='build/release/lib/?.so;;' lua5.4 spec/figures/constraints.lua
local impetus = require "impetus"
local G = 9.81
local function len(a) return math.sqrt(a[1] ^ 2 + a[2] ^ 2 + a[3] ^ 2) end

local function bead(ks, kd, dt)
  local w = impetus.world()
  w.constraint_ks, w.constraint_kd = ks, kd
  local b = w:particle { position = { 1, 0, 0 } }
  w:wire(b, { center = { 0, 0, 0 }, radius = 1 })
  local e0, dr, de = w:energy(), 0, 0
  for _ = 1, math.floor(10 / dt + 0.5) do
    w:step(dt)
    dr, de = math.max(dr, math.abs(len(b.position) - 1)), math.max(de, math.abs(w:energy() - e0))
  end
  return dr, de
end
for _, dt in ipairs({ 1 / 60, 1 / 240 }) do
  local r0, e0 = bead(0, 0, dt)
  local r1, e1 = bead(100, 20, dt)
  print(string.format("bead on a unit wire, RK4, dt = 1/%d, 10 s: off the wire %.2e m without feedback, %.2e m with; " ..
    "energy error %.2e J / %.2e J", math.floor(1 / dt + 0.5), r0, r1, e0, e1))
end

local function period(make, L, th, dt)
  local w = impetus.world()
  local bob = make(w, L, th)
  local crossings, lastx, t = {}, bob.position[1], 0
  while #crossings < 4 do
    w:step(dt)
    t = t + dt
    local x = bob.position[1]
    if lastx < 0 and x >= 0 then crossings[#crossings + 1] = t - dt * x / (x - lastx) end
    lastx = x
  end
  return (crossings[4] - crossings[1]) / 3
end
local rod = function(w, L, th)
  local pivot = w:particle { position = { 0, 0, 0 }, fixed = true }
  local bob = w:particle { position = { L * math.sin(th), -L * math.cos(th), 0 } }
  w:rod(pivot, bob)
  return bob
end
local curve = function(w, L, th)
  return w:curve_particle { u = th, curve = function(u) return { L * math.sin(u), -L * math.cos(u), 0 } end }
end
for name, make in pairs({ rod = rod, curve = curve }) do
  local L, th = 1.5, 0.05
  local T, T0 = period(make, L, th, 1 / 240), 2 * math.pi * math.sqrt(L / G)
  print(string.format("pendulum (%s), L = 1.5 m, 0.05 rad, dt = 1/240: period %.6f s, 2 pi sqrt(L/g) = %.6f s, " ..
    "relative difference %.3e (theta0^2/16 = %.3e)", name, T, T0, (T - T0) / T0, th * th / 16))
end

do
  local w = impetus.world()
  local a = w:particle { position = { 0, 0, 0 }, fixed = true }
  local b = w:particle { position = { 1, 0, 0 } }
  local c = w:particle { position = { 2, 0, 0 } }
  w:rod(a, b)
  w:rod(b, c)
  local e0, de, dc = w:energy(), 0, 0
  for _ = 1, 1200 do
    w:step(1 / 240)
    de, dc = math.max(de, math.abs(w:energy() - e0)), math.max(dc, w:constraint_error())
  end
  print(string.format("double pendulum, 1 m links from horizontal, RK4, dt = 1/240, 5 s: energy error %.2e J " ..
    "(m g L = 9.81 J), largest |C| %.2e m", de, dc))
end

do
  local m, R, th = 2, 1.5, 0.6
  local w = impetus.world()
  local b = w:particle { position = { R * math.sin(th), -R * math.cos(th), 0 }, mass = m }
  local wire = w:wire(b, { center = { 0, 0, 0 } })
  w:solve_constraints()
  local x, f = b.position, wire.force
  local s = m * G * x[2] / (x[1] ^ 2 + x[2] ^ 2)
  print(string.format("bead at rest: constraint force (%.12f, %.12f) N, projection of gravity (%.12f, %.12f) N",
    f[1], f[2], s * x[1], s * x[2]))
end

do
  local function run(kind)
    local w = impetus.world()
    local b = w:particle { position = { 0.6, -0.8, 0 }, velocity = { 1, 0.75, 0 } }
    if kind == "wire" then w:wire(b, { center = { 0, 0, 0 } })
    elseif kind == "gradient" then
      w:constraint { particles = { b }, C = function(x) return (x[1] ^ 2 + x[2] ^ 2 + x[3] ^ 2 - 1) / 2, x end }
    else
      w:constraint { particles = { b }, C = function(x) return (x[1] ^ 2 + x[2] ^ 2 + x[3] ^ 2 - 1) / 2 end }
    end
    for _ = 1, 240 do w:step(1 / 120) end
    return b.position
  end
  local x0, x1, x2 = run("wire"), run("gradient"), run("numeric")
  print(string.format("Lua circle vs built-in wire after 2 s: %.1e m with gradients, %.1e m from C alone",
    len({ x1[1] - x0[1], x1[2] - x0[2], x1[3] - x0[3] }), len({ x2[1] - x0[1], x2[2] - x0[2], x2[3] - x0[3] })))
end

do
  -- a 40-link chain dropped across a sphere onto the floor (collisions + the projection after them)
  local w = impetus.world()
  w:plane { restitution = 0.3, friction = 0.4 }
  w:sphere { static = true, position = { 0, 1, 0 }, radius = 0.8, restitution = 0.3, friction = 0.4 }
  local prev
  for i = 0, 40 do
    local p = w:particle { position = { -2 + 0.1 * i, 2.5, 0.05 * math.sin(i) }, radius = 0.04, mass = 0.05 }
    if prev then w:rod(prev, p) end
    prev = p
  end
  local during = 0
  for _ = 1, 720 do
    w:step(1 / 240)
    during = math.max(during, w:constraint_error())
  end
  for _ = 1, 240 do w:step(1 / 240) end
  print(string.format("chain of 40 rods (0.1 m) dropped across a sphere onto the floor, 240 Hz: largest |C| %.1e m " ..
    "through the impacts, %.1e m at rest after 4 s", during, w:constraint_error()))
end

do
  -- the 1000-link, 10 m chain of scenes/bench/chain_1000.lua (1 cm links of 10 g, swinging at 0.5 rad/s about
  -- its pivot): RK4 is stable while h times the fastest transverse wave, ~2 sqrt(T / (m l)), stays below 2.8
  local function chain(dt, feedback)
    local w = impetus.world()
    if not feedback then w.constraint_ks, w.constraint_kd = 0, 0 end
    local prev = w:particle { position = { 0, 0, 0 }, fixed = true }
    for i = 1, 1000 do
      local p = w:particle { position = { 0, -i * 0.01, 0 }, velocity = { 0.5 * i * 0.01, 0, 0 }, mass = 0.01 }
      w:rod(prev, p)
      prev = p
    end
    local worst = 0
    for s = 1, math.floor(2 / dt) do
      w:step(dt)
      local c = w:constraint_error()
      if not (c < 0.01) then return string.format("unstable (|C| %.2g m at step %d)", c, s) end
      worst = math.max(worst, c)
    end
    return string.format("stable (largest |C| %.1e m)", worst)
  end
  for _, dt in ipairs { 1e-3, 1.25e-3, 1 / 600 } do
    print(string.format("chain of 1000 rods (10 m), RK4, dt = %.2f ms, 2 s: %s with feedback, %s without", dt * 1e3,
      chain(dt, true), chain(dt, false)))
  end
end

do
  -- a bead on a unit wire started at 4 m/s, at 60 Hz: RK4 holds it; Euler gains energy and the feedback pumps more in
  for _, method in ipairs { "rk4", "euler" } do
    local w = impetus.world { integrator = method }
    local b = w:particle { position = { 1, 0, 0 }, velocity = { 0, -4, 0 } }
    w:wire(b, { center = { 0, 0, 0 } })
    local off = 0
    for s = 1, 600 do
      w:step(1 / 60)
      off = math.max(off, math.abs(len(b.position) - 1))
      if not (off < 1) then
        print(string.format("bead at 4 m/s, %s at 60 Hz: more than 1 m off the wire at t = %.2f s", method, s / 60))
        break
      end
    end
    if off < 1 then print(string.format("bead at 4 m/s, %s at 60 Hz, 10 s: at most %.1e m off the wire", method, off)) end
  end
end
