-- tools/joint_figures.lua: the joint figures of docs/joints.md, reproduced.
--   LUA_PATH='scripts/?.lua;scripts/?/init.lua;spec/support/?.lua;;' LUA_CPATH='build/release/lib/?.so;;' lua5.4 tools/joint_figures.lua
-- Prints, for each chain, the largest joint gap over the run and the median wall time per step.
local impetus = require "impetus"
local clock = impetus.core.clock

-- n links hanging from the world, laid out horizontally: boxes 1 m x 0.2 x 0.2, or capsules 0.4 m long
local function chain(n, shape, eps)
  local w = impetus.world {}
  w.sleeping = false
  local prev, joints = nil, {}
  local len = shape == "box" and 1 or 0.4
  for i = 1, n do
    local x, y = (i - 0.5) * len, 10 + i * (eps or 0) -- eps: link i raised by i eps (a perturbed start)
    local b = shape == "box" and w:box { size = { 1, 0.2, 0.2 }, position = { x, y, 0 }, density = 100 }
      or w:capsule { radius = 0.05, length = len - 0.1, position = { x, y, 0 }, axis = { 0, 0, 1 },
        angle = math.pi / 2, density = 100 }
    joints[i] = w:joint { type = "point", a = b, b = prev, anchor = { (i - 1) * len, 10, 0 } }
    prev = b
  end
  return w, joints
end

local function run(label, n, shape, dt, steps, eps)
  local w, joints = chain(n, shape, eps)
  local worst, times = 0, {}
  for s = 1, steps do
    local t0 = clock()
    w:step(dt)
    times[s] = (clock() - t0) * 1e3
    for _, j in ipairs(joints) do
      local gap = j.gap
      if gap ~= gap or gap > worst then worst = gap end
    end
    if worst ~= worst or worst > 1 then
      print(string.format("%-40s blew up at step %d (gap %.3g m)", label, s, worst))
      return math.huge
    end
  end
  table.sort(times)
  print(string.format("%-40s largest gap %.3g m over %d steps, %.3f ms/step (median)", label, worst, steps,
    times[(#times + 1) // 2]))
  return worst
end

run("5 box links, dt 1/60", 5, "box", 1 / 60, 10000)
run("5 capsule links, dt 1/60", 5, "capsule", 1 / 60, 2000)
run("5 capsule links, dt 1/120", 5, "capsule", 1 / 120, 10000)
run("50 capsule links, dt 1/240", 50, "capsule", 1 / 240, 4000)
run("50 capsule links, dt 1/60", 50, "capsule", 1 / 60, 1000)
run("50 capsule links, dt 1/60, 10000 steps", 50, "capsule", 1 / 60, 10000)

-- the spread of the chaotic 50-link run at 1/60 over perturbed starts: eps = 1e-12 ... 1e-5 m, 10 runs
local lo, hi = math.huge, 0
for k = 0, 9 do
  local eps = 10 ^ (-12 + 7 * k / 9)
  local g = run(string.format("50 capsule links, dt 1/60, eps %.1e", eps), 50, "capsule", 1 / 60, 1000, eps)
  lo, hi = math.min(lo, g), math.max(hi, g)
end
print(string.format("perturbed starts: largest gaps between %.3g and %.3g m", lo, hi))

-- the energy S1's post-stabilization takes out of the 50-link chain over the same 16.7 s at 1/60 and 1/240
-- (its fall from horizontal releases M g L / 2)
for _, run_dt in ipairs { { 1 / 60, 1000 }, { 1 / 240, 4000 } } do
  local w = chain(50, "capsule")
  local bodies = w:bodies()
  local function energy()
    local e = 0
    for _, b in ipairs(bodies) do e = e + b:kinetic_energy() + b.mass * 9.81 * b.position[2] end
    return e
  end
  local e0 = energy()
  for _ = 1, run_dt[2] do w:step(run_dt[1]) end
  print(string.format("50 capsule links, dt 1/%d, %d steps: energy lost %.0f J", math.floor(1 / run_dt[1] + 0.5), run_dt[2], e0 - energy()))
end

-- hubs (a body with 8 or more joints is a node of its own): 40 bobs on a hub against 4 (one dense block) and
-- the compound pendulum's quarter period, at dt 1/240
do
  local mech = require "mechanisms"
  local t40, gap40, _, m, hubs = mech.hub_star(40, 1 / 240)
  local t4 = mech.hub_star(4, 1 / 240)
  local tq = mech.hub_star_quarter(m)
  print(string.format("40 bobs on a hub (%d hub node): quarter period %.6f s, 4 bobs %.6f s (|difference| %.1e s), " ..
    "elliptic integral %.6f s (%+.2f %%), largest gap %.1e m", hubs, t40, t4, math.abs(t40 - t4), tq, 100 * (t40 / tq - 1), gap40))
end
