-- bench/peers/impetus_scenes.lua: the peer benchmark's scenes in impetus, measured as peers.cpp measures
-- ODE and Bullet: median ms/step over 1000 steps of 1/60 s, the top box's drop and the largest sideways
-- slide. Run from the checkout: bench/peers/run.sh (or lua5.4 with the build's paths, args: [--sleep]).
local impetus = require "impetus"
local sleep_on = arg[1] == "--sleep"

local function run(name, build)
  local w = impetus.world {}
  w.sleeping = sleep_on
  build(w)
  local bodies = w:bodies()
  local p0 = {}
  for i, b in ipairs(bodies) do p0[i] = b.position end
  local times = {}
  for s = 1, 1000 do
    local t = os.clock()
    w:step(1 / 60)
    times[s] = (os.clock() - t) * 1000
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

run("pile", dofile("scenes/bench/pile_1000.lua").pile)
run("pyramid", function(w) dofile("scenes/bench/pyramid_20.lua").pyramid(w, 20) end)
