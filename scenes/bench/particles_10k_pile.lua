-- scenes/bench/particles_10k_pile.lua: 10,000 particles (r 2 cm) that collide with each other
-- (world.particle_collisions), poured as a block into a pen of four static boxes on the floor, RK4,
-- dt 1/60: the pair grid, the sweeps and the pile's contacts with the floor and the walls.
-- Run: ./impetus bench scenes/bench/particles_10k_pile.lua
return {
  title = "10,000 colliding particles",
  dt = 1 / 60,
  camera = { eye = { 2.5, 2, 3 }, target = { 0, 0.3, 0 } },
  setup = function(world)
    world.integrator = "rk4"
    world.particle_collisions = true
    world:plane { friction = 0.5, restitution = 0 }
    for k = -1, 1, 2 do
      world:box { static = true, size = { 0.1, 1.5, 1.3 }, position = { k * 0.6, 0.75, 0 } }
      world:box { static = true, size = { 1.3, 1.5, 0.1 }, position = { 0, 0.75, k * 0.6 } }
    end
    local r, n = 0.02, 0
    for j = 0, 24 do
      for i = 0, 19 do
        for k = 0, 19 do
          n = n + 1
          world:particle { position = { (i - 9.5) * 2.5 * r + 0.002 * (j % 3), 0.05 + j * 2.5 * r, (k - 9.5) * 2.5 * r },
            radius = r, mass = 0.005, friction = 0.4 }
        end
      end
    end
    assert(n == 10000)
  end,
}
