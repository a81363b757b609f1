-- scenes/bench/particles_100k.lua: 100,000 free particles under gravity and drag, RK4.
-- Run: ./impetus bench scenes/bench/particles_100k.lua
return {
  title = "100k particles, RK4",
  camera = { eye = { 30, 25, 40 }, target = { 0, 5, 0 } },
  setup = function(world)
    world.integrator = "rk4"
    world.drag = 0.05
    math.randomseed(7)
    for i = 0, 99999 do
      world:particle {
        position = { (i % 100) * 0.3 - 15, 10 + (i // 10000) * 0.3, ((i // 100) % 100) * 0.3 - 15 },
        velocity = { math.random() - 0.5, 5 * math.random(), math.random() - 0.5 },
        radius = 0.04,
      }
    end
  end,
}
