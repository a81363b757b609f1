-- scenes/bench/qp_stack10.lua: a stack of 10 boxes resting on the floor under exact contact forces
-- (world.contact = "qp", RK4, 60 Hz, friction 0.5): 40 contact points, one LCP of 40 rows plus the
-- friction rows in each of the 4 derivative evaluations of a step.
-- Run: ./impetus bench scenes/bench/qp_stack10.lua
return {
  title = "10 boxes stacked, exact contact (qp)",
  camera = { eye = { 6, 6, 12 }, target = { 0, 5, 0 } },
  setup = function(world)
    world.contact = "qp"
    world.friction = 0.5
    world:body { static = true, shapes = { { type = "plane" } } }
    for i = 0, 9 do
      world:box { size = { 1, 1, 1 }, position = { 0, 0.5 + i, 0 }, mass = 1, color = { 0.4 + 0.05 * i, 0.5, 0.7 } }
    end
  end,
}
