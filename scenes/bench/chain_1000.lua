-- scenes/bench/chain_1000.lua: a chain of 1000 particles on 1000 rods (S3 tinkertoys), RK4.
-- One end is pinned (a fixed particle); the chain starts straight at 30 degrees below the
-- horizontal and swings down under gravity. Rod length 1 cm, 10 m of chain, 10 g a link.
-- Run: ./impetus bench scenes/bench/chain_1000.lua
local N, L = 1000, 0.01
local DT = tonumber(os.getenv("CHAIN_DT") or "") or 1 / 1000
return {
  title = "chain of 1000 rods",
  dt = DT,
  camera = { mode = "2d", center = { 2, -4 }, height = 12 },
  setup = function(world)
    world.integrator = os.getenv("CHAIN_METHOD") or "rk4"
    if os.getenv("CHAIN_PRECOND") then world.constraint_preconditioner = os.getenv("CHAIN_PRECOND") end
    local c, s = math.cos(math.rad(-30)), math.sin(math.rad(-30))
    local prev = world:particle { position = { 0, 0, 0 }, fixed = true, radius = 0.02 }
    for i = 1, N do
      local p = world:particle { position = { i * L * c, i * L * s, 0 }, mass = 0.01, radius = 0.004 }
      world:rod(prev, p)
      prev = p
    end
  end,
}
