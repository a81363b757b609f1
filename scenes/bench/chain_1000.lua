-- scenes/bench/chain_1000.lua: a chain of 1000 particles on 1000 rods (S3 tinkertoys), RK4.
-- 10 m of chain (1 cm links, 10 g each) hangs from a fixed particle and swings: it starts straight
-- down, turning at 0.5 rad/s about the pivot (5 m/s at the end), and swings out ~24 degrees.
-- Why dt = 1 ms: the chain's tension T carries transverse waves up to ~2 sqrt(T / (m l)) ~ 2000/s at
-- the top, and RK4 is only stable for h * omega < 2.8 (h < 1.4 ms), whatever solves the multipliers.
-- Run: ./impetus bench scenes/bench/chain_1000.lua
-- (CHAIN_PRECOND=jacobi|none compares preconditioners, CHAIN_DT and CHAIN_METHOD change the step)
local N, L, OMEGA = 1000, 0.01, 0.5
return {
  title = "chain of 1000 rods",
  dt = tonumber(os.getenv("CHAIN_DT") or "") or 1 / 1000,
  camera = { mode = "2d", center = { 0, -5 }, height = 11 },
  grid = false,
  setup = function(world)
    world.integrator = os.getenv("CHAIN_METHOD") or "rk4"
    if os.getenv("CHAIN_PRECOND") then world.constraint_preconditioner = os.getenv("CHAIN_PRECOND") end
    local prev = world:particle { position = { 0, 0, 0 }, fixed = true, radius = 0.03 }
    for i = 1, N do
      local p = world:particle { position = { 0, -i * L, 0 }, velocity = { OMEGA * i * L, 0, 0 }, mass = 0.01,
        radius = 0.004, color = { 1 - 0.6 * i / N, 0.55 + 0.3 * i / N, 0.25 + 0.7 * i / N, 1 } }
      world:rod(prev, p)
      prev = p
    end
  end,
}
