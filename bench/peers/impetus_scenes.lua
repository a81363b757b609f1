-- bench/peers/impetus_scenes.lua: the peer benchmark's scenes in impetus, measured as peers.cpp measures
-- ODE and Bullet: median ms/step over 1000 steps of 1/60 s, the top box's drop and the largest sideways
-- slide; for the chain the largest joint gap. Run from the checkout: bench/peers/run.sh (or lua5.4 with the
-- build's paths, args: [--sleep] [pile|pyramid|tower20|tower30|chain|chain240]).
local impetus = require "impetus"
-- wall time, as peers.cpp measures (os.clock is the process's CPU time, which counts both threads)
local clock = require("impetus.core").clock
local sleep_on, only = false, nil
for _, a in ipairs(arg) do
  if a == "--sleep" then sleep_on = true else only = a end
end

local function run(name, build)
  local w = impetus.world {}
  w.sleeping = sleep_on
  build(w)
  local bodies = w:bodies()
  local p0 = {}
  for i, b in ipairs(bodies) do p0[i] = b.position end
  local times = {}
  for s = 1, 1000 do
    local t = clock()
    w:step(1 / 60)
    times[s] = (clock() - t) * 1000
  end
  table.sort(times)
  local top, side = bodies[#bodies], 0
  for i, b in ipairs(bodies) do
    local p = b.position
    side = math.max(side, math.sqrt((p[1] - p0[i][1]) ^ 2 + (p[3] - p0[i][3]) ^ 2))
  end
  print(string.format("impetus %s: %.3f ms/step  top_drop %.4f m  max_side %.4f m", name, times[500],
    p0[#bodies][2] - top.position[2], side))
end

-- the chain: 50 capsule links (radius 0.05 m, core 0.3 m: 0.4 m tip to tip, density 1000) on ball joints at
-- their tips, the first joined to the world, released horizontal along +x; no ground and no collisions
-- between links (group 2, mask 1). After every step: the largest joint gap (the distance between the two
-- articulation points); "blew up" when a step's NaN guard fired, a gap was not finite or passed 1 m.
local function chain(name, dt, steps)
  local w = impetus.world {}
  w.sleeping = false
  local joints, prev = {}, nil
  for i = 1, 50 do
    local b = w:capsule { radius = 0.05, length = 0.3, position = { (i - 0.5) * 0.4, 0, 0 }, axis = { 0, 0, 1 },
      angle = math.pi / 2, density = 1000, group = 2, mask = 1 }
    joints[i] = w:joint { type = "point", a = b, b = prev, anchor = { (i - 1) * 0.4, 0, 0 } }
    prev = b
  end
  local times, max_gap, over_cm, blew = {}, 0, nil, nil
  for s = 1, steps do
    local t = clock()
    local ok = w:step(dt)
    times[s] = (clock() - t) * 1000
    local worst = 0
    for _, j in ipairs(joints) do
      local g = j.gap
      if g ~= g then worst = math.huge else worst = math.max(worst, g) end
    end
    max_gap = math.max(max_gap, worst)
    if not over_cm and not (worst <= 0.01) then over_cm = s end
    if not ok or not (worst < 1) then blew = s break end
  end
  table.sort(times)
  local line = string.format("impetus %s: %.3f ms/step  max_gap %.3g m", name, times[(#times + 1) // 2],
    blew and math.huge or max_gap)
  if over_cm then line = line .. "  gap over 1 cm from step " .. over_cm end
  if blew then line = line .. "  blew up at step " .. blew end
  print(line)
  io.stdout:flush()
end

if not only or only == "pile" then run("pile", dofile("scenes/bench/pile_1000.lua").pile) end
if not only or only == "pyramid" then run("pyramid", function(w) dofile("scenes/bench/pyramid_20.lua").pyramid(w, 20) end) end
for _, n in ipairs { 20, 30 } do
  local name = "tower" .. n
  if not only or only == name then
    run(name, function(w)
      w:plane { friction = 0.6 }
      for i = 1, n do w:box { size = { 1, 1, 1 }, position = { 0, i - 0.5, 0 }, density = 1000, friction = 0.6 } end
    end)
  end
end
if not only or only == "chain" then chain("chain", 1 / 60, 1000) end
if not only or only == "chain240" then chain("chain240", 1 / 240, 4000) end
