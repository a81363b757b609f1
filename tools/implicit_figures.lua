-- tools/implicit_figures.lua: the figures of docs/implicit.md (implicit integration, cloth and hair),
-- computed afresh. Run from the checkout's root:
--   LUA_PATH='scripts/?.lua;scripts/?/init.lua;;' LUA_CPATH='build/release/lib/?.so;;' lua5.4 tools/implicit_figures.lua
local impetus = require "impetus"

local function dist(a, b) return math.sqrt((a[1] - b[1]) ^ 2 + (a[2] - b[2]) ^ 2 + (a[3] - b[3]) ^ 2) end

-- 1. The stiff pair x' = -x, y' = -k y: one backward Euler step against x / (1 + h), y / (1 + h k)
do
  local k, worst = 1000, 0
  for _, h in ipairs({ 1e-3, 1e-2, 0.1, 1, 10 }) do
    local x = impetus.ode.step(function(s) return { -s[1], -k * s[2] } end, { 1, 1 }, 0, h, "implicit")
    worst = math.max(worst, math.abs(x[1] - 1 / (1 + h)), math.abs(x[2] - 1 / (1 + h * k)))
  end
  local o = impetus.ode.step(function(s) return { -s[1], -k * s[2] } end, { 0.7, -2 }, 0, 1e12, "implicit")
  print(string.format("stiff pair, k = 1000: largest error of one step over h = 1e-3..10: %.1e; h = 1e12 lands at (%.1e, %.1e)",
    worst, o[1], o[2]))
end

-- 2. Force Jacobians against central differences (a deformed, moving grid cloth, and a hair)
do
  math.randomseed(7)
  local w = impetus.world {}
  local cl = w:cloth { rows = 4, cols = 5, size = { 1, 0.8 }, normal = { 0, 0, 1 }, pin = "top", stretch = 1000,
    shear = 50, bend = 0.01, damping = 0.02 }
  w:hair { root = { 2, 1, 0 }, direction = { 1, 0, 0 }, length = 0.4, segments = 5, bend = 1e-3, stretch = 20, damping = 0.05 }
  for _, p in ipairs(w:particles()) do
    if not p.fixed then
      local x = p.position
      p.position = { x[1] + 0.05 * (math.random() - 0.5), x[2] + 0.05 * (math.random() - 0.5), x[3] + 0.05 * (math.random() - 0.5) }
      p.velocity = { math.random() - 0.5, math.random() - 0.5, math.random() - 0.5 }
    end
  end
  local r = w:jacobian_check()
  print(string.format("Jacobians of cloth and hair vs finite differences: df/dx %.1e, df/dv %.1e (relative); fused kernels %.1e",
    r.dfdx, r.dfdv, r.matrix))
end

-- 3. A 1 m cloth (0.2 kg, stretch 1000 N/m) hanging from its top edge, at rest
for _, N in ipairs({ 11, 21, 31 }) do
  local k, rho, L = 1000, 0.2, 1
  local w = impetus.world { integrator = "implicit" }
  w.cg_tolerance = 1e-8
  local cl = w:cloth { rows = N, cols = N, size = L, normal = { 0, 0, 1 }, position = { 0, 2, 0 }, pin = "top",
    mass = rho * L * L, stretch = k, damping = 0.02 }
  for _ = 1, 300 do w:step(1 / 60) end
  local c = (N + 1) // 2
  local e = dist(cl:particle(1, c).position, cl:particle(N, c).position) - L
  print(string.format("hanging cloth %d x %d: elongation %.4f mm (continuum rho g L^2 / 2k = %.4f mm)", N, N, e * 1e3,
    rho * 9.81 * L * L / (2 * k) * 1e3))
end

-- 4. A clamped hair as a cantilever under its weight, refined: the tip against Euler-Bernoulli
do
  local m, L, B = 0.01, 0.3, 0.05
  local exact = m * 9.81 / L * L ^ 4 / (8 * B)
  for _, n in ipairs({ 4, 8, 16, 32, 64 }) do
    local w = impetus.world { integrator = "implicit" }
    w.cg_tolerance = 1e-10
    local h = w:hair { root = { 0, 1, 0 }, direction = { 1, 0, 0 }, length = L, segments = n, mass = m, bend = B,
      stretch = 2000, damping = 0.05 }
    for _ = 1, 240 do w:step(1 / 60) end
    local d = 1 - h:particle(n + 1).position[2]
    print(string.format("hair cantilever, %2d segments: tip deflection %.4f mm, Euler-Bernoulli %.4f mm, error %.2f%%", n,
      d * 1e3, exact * 1e3, 100 * (d - exact) / exact))
  end
end

-- 5. The CG tolerance: the swinging 64 x 64 cloth of scenes/bench/cloth_64.lua after 2 s at the default
-- cg_tolerance 1e-2 against the same run at 1e-6 (largest distance between the two runs' particles)
do
  local function swing(tol)
    local w = impetus.world { integrator = "implicit" }
    w.cg_tolerance = tol
    local cl = w:cloth { rows = 64, cols = 64, size = 1, normal = { 0, 1, 0 }, position = { 0, 2, 0 }, pin = "top_corners",
      mass = 0.3, stretch = 2000, shear = 50, bend = 2e-4, damping = 0.01 }
    for _ = 1, 120 do w:step(1 / 60) end
    return cl:particles()
  end
  local a, b, worst = swing(1e-2), swing(1e-6), 0
  for k = 1, #a do worst = math.max(worst, dist(a[k].position, b[k].position)) end
  print(string.format("64 x 64 cloth swinging 2 s: cg_tolerance 1e-2 ends within %.2f mm of a 1e-6 solve", worst * 1e3))
end
