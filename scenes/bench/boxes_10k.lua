-- scenes/bench/boxes_10k.lua: broad + narrow phase for 10,000 boxes in a pile (incremental sweep and prune).
-- The boxes are packed so that each one overlaps its neighbours, turned at random, and drift
-- slowly without gravity and without contact response (world.contact = "none"), so every step finds ~117,000 pairs
-- and ~69,000 touching manifolds. Run: ./impetus bench scenes/bench/boxes_10k.lua
-- (boxes_10k_grid.lua and boxes_10k_sweep.lua: the same pile through the hash grid and the sort and sweep.)
local impetus = require "impetus"
local quat = impetus.quat

local function pile(world)
  world.gravity = { 0, 0, 0 }
  world.contact = "none" -- detection only: this bench measures broad + narrow phase
  world:plane {}
  math.randomseed(11)
  local n = 0
  for layer = 0, 15 do
    for i = 0, 24 do
      for k = 0, 24 do
        n = n + 1
        local jitter = function() return (math.random() - 0.5) * 0.1 end
        world:box {
          size = { 1, 1, 1 },
          position = { (i - 12) * 0.97 + jitter(), 0.48 + layer * 0.97 + jitter(), (k - 12) * 0.97 + jitter() },
          orientation = quat.from_axis_angle({ math.random() - 0.5, math.random() - 0.5, math.random() - 0.5 },
            (math.random() - 0.5) * 0.2),
          velocity = { jitter() * 0.1, jitter() * 0.1, jitter() * 0.1 },
          angular_velocity = { jitter(), jitter(), jitter() },
          color = { 0.55 + 0.4 * math.random(), 0.5, 0.3 },
        }
      end
    end
  end
  assert(n == 10000)
end

return {
  title = "10,000 boxes in a pile: broad + narrow phase",
  camera = { eye = { 30, 25, 35 }, target = { 0, 6, 0 } },
  pile = pile,
  setup = function(world)
    world.broadphase = "sap"
    pile(world)
  end,
}
