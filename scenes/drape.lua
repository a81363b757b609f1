-- scenes/drape.lua: a square of cloth dropped onto a sphere, implicit integration at 60 Hz. It
-- settles without jitter: particles resting on the sphere or the ground have their normal
-- direction filtered out of the solve (Baraff and Witkin), and Coulomb friction holds the folds.
-- Keys: D drops it again from higher up, S toggles a slippery sphere.
local S = state -- what setup builds: the runner keeps `state` across hot reloads (which re-run this file)
local N = 32

local function drop(world, height)
  if S.cloth and S.cloth:valid() then S.cloth:destroy() end
  S.cloth = world:cloth {
    rows = N, cols = N, size = 1.8, position = { 0, height, 0 }, mass = 0.4, radius = 0.012,
    stretch = 2000, shear = 60, bend = 5e-4, damping = 0.01,
    color = { 0.16, 0.42, 0.72 }, back_color = { 0.92, 0.86, 0.70 },
  }
end

return {
  title = "Cloth draped over a sphere (implicit)",
  keys = { { "d", "drop the cloth again" }, { "s", "the sphere slippery / rough" } },
  camera = { eye = { 1.9, 1.7, 2.1 }, target = { 0, 0.65, 0 } },
  setup = function(world)
    world.integrator = "implicit"
    world:plane { friction = 0.8, restitution = 0 }
    S.ball = world:sphere { static = true, position = { 0, 0.8, 0 }, radius = 0.5, friction = 0.6, restitution = 0 }
    drop(world, 1.6)
  end,
  keypressed = function(world, key)
    if key == "d" then drop(world, 2.2) end
    if key == "s" then S.ball.friction = S.ball.friction > 0.1 and 0.02 or 0.6 end
  end,
  draw = function(world, gfx)
    local _, h = gfx.size()
    local p = world:profile()
    gfx.text(16, h - 50, string.format("%d particles   CG %d iterations   sphere friction %.2f", world.particle_count,
      p.cg_iterations, S.ball.friction), { 0.85, 0.85, 0.85, 1 })
    gfx.text(16, h - 30, "D: drop again   S: slippery sphere   drag the cloth with the mouse", { 0.8, 0.8, 0.8, 1 })
  end,
}
