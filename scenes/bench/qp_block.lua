-- scenes/bench/qp_block.lua: a block of 1,100 unit boxes (10 x 10 columns of 11) touching side by side on
-- the floor under exact contact (world.contact = "qp", RK4, 60 Hz, frictionless): groups of thousands
-- of contact rows, the largest over world.qp_dense_max, solved by the projected Gauss-Seidel fallback.
-- Run: ./impetus bench scenes/bench/qp_block.lua --steps 10
-- (QP_DENSE_MAX=n in the environment sets world.qp_dense_max, to compare the dense solver)
return {
  title = "1,100 boxes in a block, exact contact (qp) with the Gauss-Seidel fallback",
  camera = { eye = { 20, 16, 24 }, target = { 4.5, 5, 4.5 } },
  setup = function(world)
    world.contact = "qp"
    local dense = os and os.getenv and tonumber(os.getenv("QP_DENSE_MAX") or "")
    if dense then world.qp_dense_max = dense end
    world:body { static = true, shapes = { { type = "plane" } } }
    for x = 0, 9 do
      for z = 0, 9 do
        for y = 0, 10 do
          world:box { size = { 1, 1, 1 }, position = { x, 0.5 + y, z }, mass = 1, color = { 0.4 + 0.05 * y, 0.5, 0.7 } }
        end
      end
    end
  end,
}
