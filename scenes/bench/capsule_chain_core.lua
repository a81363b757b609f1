-- scenes/bench/capsule_chain_core.lua: S1's joint solver under load. 50 capsule links (0.4 m, 0.29 kg
-- each) on ball joints hang from a fixed pivot, released horizontal at dt 1/60: the chain whips, tension
-- near the pivot carries the whole chain's weight and swing, and the tip turns up to ~1 rad per step.
-- Run: ./impetus bench scenes/bench/capsule_chain_core.lua --steps 1000   (the largest gap is drawn)
local N, L = 50, 0.4
local joints = {}
return {
  title = "50-link capsule chain, ball joints",
  dt = 1 / 60,
  camera = { mode = "2d", center = { 0, 2 }, height = 26 },
  setup = function(world)
    world.sleeping = false
    joints = {}
    local prev
    for i = 1, N do
      local b = world:capsule { radius = 0.05, length = L - 0.1, position = { (i - 0.5) * L, 10, 0 }, axis = { 0, 0, 1 },
        angle = math.pi / 2, density = 100 }
      joints[i] = world:joint { type = "point", a = b, b = prev, anchor = { (i - 1) * L, 10, 0 } }
      prev = b
    end
  end,
  draw = function(world, gfx)
    local gap = 0
    for _, j in ipairs(joints) do gap = math.max(gap, j.gap) end
    gfx.text(10, 80, string.format("largest joint gap now %.1e m", gap))
  end,
}
